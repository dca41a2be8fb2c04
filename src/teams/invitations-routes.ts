import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { InvitationsService } from './invitations-service.ts';
import * as S from './invitation-schemas.ts';
import { Membership, TeamParams } from './teams-schemas.ts';

export function invitationRoutes({
  invitations,
}: {
  invitations: InvitationsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['invitations'];
    const I = { 200: Type.Ref('Invitation'), ...problemResponses };

    app.get(
      '/v2/teams/:team_id/invitations',
      {
        schema: {
          tags,
          summary: "A team's invitations (admin)",
          params: TeamParams,
          querystring: ListQuery,
          response: { 200: S.InvitationList, ...problemResponses },
        },
      },
      async (req) =>
        invitations.list(actorOf(req), req.params.team_id, req.query.limit ?? 50, req.query.cursor),
    );

    app.post(
      '/v2/teams/:team_id/invitations',
      {
        schema: {
          tags,
          summary: 'Invite an e-mail address (admin); sends the e-mail',
          params: TeamParams,
          body: S.CreateInvitationBody,
          response: { 201: Type.Ref('Invitation'), ...problemResponses },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await invitations.create(actorOf(req), req.params.team_id, req.body)),
    );

    app.delete(
      '/v2/teams/:team_id/invitations/:invitation_id',
      {
        schema: {
          tags,
          summary: 'Take back an invitation (admin)',
          params: S.InvitationParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await invitations.revoke(actorOf(req), req.params.team_id, req.params.invitation_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v2/teams/:team_id/invitations/:invitation_id/resend',
      {
        schema: {
          tags,
          summary: 'New token, new 7 days, new e-mail (admin)',
          params: S.InvitationParams,
          response: I,
        },
      },
      async (req) => invitations.resend(actorOf(req), req.params.team_id, req.params.invitation_id),
    );

    app.post(
      '/v2/teams/invitations/:token/accept',
      {
        schema: {
          tags,
          summary: "Accept an invitation addressed to the caller's e-mail",
          params: S.TokenParams,
          response: { 200: Membership, ...problemResponses },
        },
      },
      async (req) => invitations.accept(actorOf(req), req.params.token),
    );

    app.post(
      '/v2/teams/invitations/:token/decline',
      {
        config: { auth: 'optional' },
        schema: {
          tags,
          summary: 'Decline an invitation (the token suffices; a signed-in caller must match)',
          params: S.TokenParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await invitations.decline(req.actor, req.params.token);
        return reply.code(204).send(null);
      },
    );
  };
}
