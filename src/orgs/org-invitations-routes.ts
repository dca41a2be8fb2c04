// /v2/orgs/<org_id>/invitations and /v2/orgs/invitations/<token>: the team invitation routes'
// rules, link, expiry and answers, for an organization (teams/invitations-service.ts, kind org).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import { TokenParams } from '../teams/invitation-schemas.ts';
import type { OrgInvitationsService } from './org-invitations.ts';
import * as S from './orgs-schemas.ts';

export function orgInvitationRoutes({
  orgInvitations,
}: {
  orgInvitations: OrgInvitationsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['orgs'];
    const invitations = orgInvitations;

    app.get(
      '/v2/orgs/:org_id/invitations',
      {
        schema: {
          tags,
          summary: "An organization's invitations (admin)",
          params: S.OrgParams,
          querystring: ListQuery,
          response: { 200: S.OrgInvitationList, ...problemResponses },
        },
      },
      async (req) =>
        invitations.list(actorOf(req), req.params.org_id, req.query.limit ?? 50, req.query.cursor),
    );

    app.post(
      '/v2/orgs/:org_id/invitations',
      {
        schema: {
          tags,
          summary: 'Invite an e-mail address to an organization (admin); sends the e-mail',
          params: S.OrgParams,
          body: S.CreateOrgInvitationBody,
          response: { 201: Type.Ref('OrgInvitation'), ...problemResponses },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await invitations.create(actorOf(req), req.params.org_id, req.body)),
    );

    app.delete(
      '/v2/orgs/:org_id/invitations/:invitation_id',
      {
        schema: {
          tags,
          summary: 'Take back an invitation (admin)',
          params: S.OrgInvitationParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await invitations.revoke(actorOf(req), req.params.org_id, req.params.invitation_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v2/orgs/:org_id/invitations/:invitation_id/resend',
      {
        schema: {
          tags,
          summary: 'New token, new 7 days, new e-mail (admin)',
          params: S.OrgInvitationParams,
          response: { 200: Type.Ref('OrgInvitation'), ...problemResponses },
        },
      },
      async (req) => invitations.resend(actorOf(req), req.params.org_id, req.params.invitation_id),
    );

    app.post(
      '/v2/orgs/invitations/:token/accept',
      {
        schema: {
          tags,
          summary: "Accept an organization invitation addressed to the caller's e-mail",
          params: TokenParams,
          response: { 200: S.OrgMembership, ...problemResponses },
        },
      },
      async (req) => invitations.accept(actorOf(req), req.params.token),
    );

    app.post(
      '/v2/orgs/invitations/:token/decline',
      {
        config: { auth: 'optional' },
        schema: {
          tags,
          summary:
            'Decline an organization invitation (the token suffices; a signed-in caller must match)',
          params: TokenParams,
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
