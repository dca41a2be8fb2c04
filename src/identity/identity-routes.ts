import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { IdParam, ListOf, ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import { InvitationForUser } from '../teams/invitation-schemas.ts';
import type { InvitationAnswers } from '../teams/invitation-answers.ts';
import type { IdentityService } from './identity-service.ts';
import type { SignupService } from './signup-service.ts';
import * as S from './identity-schemas.ts';

interface Deps {
  identity: IdentityService;
  signup: SignupService;
  invitationAnswers: InvitationAnswers;
}

export function identityRoutes({
  identity,
  signup,
  invitationAnswers,
}: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['identity'];

    app.post(
      '/v2/auth/signup',
      {
        config: { auth: 'none', secretAnswer: 'Sign in with POST /v2/auth/login.' },
        schema: {
          tags,
          summary: 'Create an account (202: once the e-mailed link is followed)',
          body: S.SignupBody,
          response: { 201: S.Session, 202: S.VerificationSent, ...problemResponses },
        },
      },
      async (req, reply) => {
        const r = await signup.signup(req.body, req.ip);
        return r.session ? reply.code(201).send(r.session) : reply.code(202).send(r.pending);
      },
    );

    app.post(
      '/v2/auth/verify-email',
      {
        config: { auth: 'none', secretAnswer: 'Sign in with POST /v2/auth/login.' },
        schema: {
          tags,
          summary: "Follow a verification link: the link's token and the account's password",
          body: S.VerifyEmailBody,
          response: { 200: S.Session, ...problemResponses },
        },
      },
      async (req) => signup.verify(req.body, req.ip),
    );

    app.post(
      '/v2/user/verification-email',
      {
        schema: {
          tags,
          summary: "E-mail a new link that proves the caller's address",
          response: { 202: S.VerificationSent, ...problemResponses },
        },
      },
      async (req, reply) => reply.code(202).send(await signup.resend(actorOf(req))),
    );

    app.post(
      '/v2/auth/login',
      {
        config: { auth: 'none', secretAnswer: 'Sign in again with a new Idempotency-Key.' },
        schema: {
          tags,
          summary: 'Sign in with e-mail and password',
          body: S.LoginBody,
          response: { 200: S.Session, ...problemResponses },
        },
      },
      async (req) => identity.login(req.body, req.ip),
    );

    app.post(
      '/v2/auth/logout',
      {
        schema: {
          tags,
          summary: 'Revoke the token used for this request',
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await identity.logout(actorOf(req));
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v2/user',
      {
        schema: {
          tags,
          summary: 'The caller',
          response: { 200: Type.Ref('User'), ...problemResponses },
        },
      },
      async (req) => identity.me(actorOf(req)),
    );

    app.get(
      '/v2/user/invitations',
      {
        schema: {
          tags,
          summary: "Pending invitations addressed to the caller's e-mail",
          querystring: ListQuery,
          response: { 200: ListOf(InvitationForUser), ...problemResponses },
        },
      },
      async (req) => identity.myInvitations(actorOf(req), req.query.limit ?? 50, req.query.cursor),
    );

    // Answered by id, once the address is proven (teams/invitation-answers.ts): the list above
    // shows only such an account's invitations, and these answer what it shows.
    const MyInvitation = Type.Object({ invitation_id: IdParam('inv') });
    for (const [answer, summary] of [
      ['accept', 'Accept, by id, an invitation listed for the caller (proven address)'],
      ['decline', 'Decline, by id, an invitation listed for the caller (proven address)'],
    ] as const)
      app.post<{ Params: { invitation_id: string } }>(
        `/v2/user/invitations/:invitation_id/${answer}`,
        {
          schema: {
            tags,
            summary,
            params: MyInvitation,
            response: { 204: NoContent, ...problemResponses },
          },
        },
        async (req, reply) => {
          await invitationAnswers[answer](actorOf(req), req.params.invitation_id);
          return reply.code(204).send(null);
        },
      );

    app.post(
      '/v2/user/tokens',
      {
        config: {
          secretAnswer:
            'If it was lost, revoke the token it made (GET /v2/user/tokens lists them) and create another with a new Idempotency-Key.',
        },
        schema: {
          tags,
          summary: 'Create a personal access token (shown once)',
          body: S.CreateTokenBody,
          response: { 201: S.NewToken, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await identity.createToken(actorOf(req), req.body)),
    );

    app.get(
      '/v2/user/tokens',
      {
        schema: {
          tags,
          summary: "The caller's active tokens",
          querystring: ListQuery,
          response: { 200: S.TokenList, ...problemResponses },
        },
      },
      async (req) => identity.listTokens(actorOf(req), req.query.limit ?? 50, req.query.cursor),
    );

    app.delete(
      '/v2/user/tokens/:token_id',
      {
        schema: {
          tags,
          summary: 'Revoke a token at once',
          params: S.TokenParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await identity.revokeToken(actorOf(req), req.params.token_id);
        return reply.code(204).send(null);
      },
    );
  };
}
