// /v2/orgs/<org_id>/invitations and /v2/orgs/invitations/<token>: the team invitation routes
// (teams/invitations-routes.ts), with their rules, link, expiry and answers, for an
// organization (teams/invitations-service.ts, kind org), in its words and its schemas.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { groupInvitationRoutes } from '../teams/invitations-routes.ts';
import type { OrgInvitationsService } from './org-invitations.ts';
import * as S from './orgs-schemas.ts';

export function orgInvitationRoutes({
  orgInvitations,
}: {
  orgInvitations: OrgInvitationsService;
}): FastifyPluginAsyncTypebox {
  return groupInvitationRoutes(orgInvitations, {
    path: '/v2/orgs',
    idParam: 'org_id',
    tags: ['orgs'],
    summaries: {
      list: "An organization's invitations (admin)",
      create: 'Invite an e-mail address to an organization (admin); sends the e-mail',
      accept: "Accept an organization invitation addressed to the caller's e-mail",
      decline:
        'Decline an organization invitation (the token suffices; a signed-in caller must match)',
    },
    schemas: {
      groupParams: S.OrgParams,
      invitationParams: S.OrgInvitationParams,
      list: S.OrgInvitationList,
      invitation: Type.Ref('OrgInvitation'),
      createBody: S.CreateOrgInvitationBody,
      membership: S.OrgMembership,
    },
  });
}
