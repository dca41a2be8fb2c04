// /v2/orgs (CONTRACT 3a): organizations, their members, leaving one.
import { jsonOrText } from '../http/json-text.ts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { MembersService } from '../teams/members-service.ts';
import { MemberList } from '../teams/teams-schemas.ts';
import type { OrgsService } from './orgs-service.ts';
import * as S from './orgs-schemas.ts';

export function orgRoutes({
  orgs,
  orgMembers,
}: {
  orgs: OrgsService;
  orgMembers: MembersService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['orgs'];
    const O = { 200: Type.Ref('Org'), ...problemResponses };
    const none = { 204: NoContent, ...problemResponses };

    app.get(
      '/v2/orgs',
      {
        schema: {
          tags,
          summary: "Organizations the caller is in, with the caller's role and the member count",
          querystring: ListQuery,
          response: { 200: S.OrgList, ...problemResponses },
        },
      },
      async (req) => orgs.list(actorOf(req), req.query.limit ?? 50, req.query.cursor),
    );

    app.post(
      '/v2/orgs',
      {
        schema: {
          tags,
          summary: 'Create an organization; the caller becomes its owner',
          body: S.CreateOrgBody,
          response: { 201: Type.Ref('Org'), ...problemResponses },
        },
      },
      async (req, reply) => reply.code(201).send(await orgs.create(actorOf(req), req.body)),
    );

    app.get(
      '/v2/orgs/:org_id',
      { schema: { tags, summary: 'An organization (member)', params: S.OrgParams, response: O } },
      async (req) => orgs.get(actorOf(req), req.params.org_id),
    );

    app.patch(
      '/v2/orgs/:org_id',
      {
        schema: {
          tags,
          summary: 'Rename an organization, change its slug or its base_role (admin)',
          params: S.OrgParams,
          body: S.UpdateOrgBody,
          response: O,
        },
      },
      async (req) => orgs.update(actorOf(req), req.params.org_id, req.body),
    );

    app.delete(
      '/v2/orgs/:org_id',
      {
        schema: {
          tags,
          summary:
            'Delete an organization that owns no project, with its memberships and invitations (owner)',
          params: S.OrgParams,
          response: none,
        },
      },
      async (req, reply) => {
        await orgs.remove(actorOf(req), req.params.org_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v2/orgs/:org_id/leave',
      {
        schema: {
          tags,
          summary: 'Leave an organization (anyone but the owner)',
          params: S.OrgParams,
          response: none,
        },
      },
      async (req, reply) => {
        await orgs.leave(actorOf(req), req.params.org_id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v2/orgs/:org_id/members',
      {
        schema: {
          tags,
          summary: 'Members of an organization (member)',
          params: S.OrgParams,
          querystring: ListQuery,
          response: { 200: MemberList, ...problemResponses },
        },
      },
      async (req, reply) =>
        jsonOrText(
          reply,
          await orgMembers.list(
            actorOf(req),
            req.params.org_id,
            req.query.limit ?? 50,
            req.query.cursor,
          ),
        ),
    );

    app.patch(
      '/v2/orgs/:org_id/members/:user_id',
      {
        schema: {
          tags,
          summary: "Change a member's org role to member or admin (admin)",
          params: S.OrgMemberParams,
          body: S.OrgRoleBody,
          response: { 200: Type.Ref('Member'), ...problemResponses },
        },
      },
      async (req) =>
        orgMembers.changeRole(actorOf(req), req.params.org_id, req.params.user_id, req.body),
    );

    app.delete(
      '/v2/orgs/:org_id/members/:user_id',
      {
        schema: {
          tags,
          summary: 'Remove a member (admin)',
          params: S.OrgMemberParams,
          response: none,
        },
      },
      async (req, reply) => {
        await orgMembers.remove(actorOf(req), req.params.org_id, req.params.user_id);
        return reply.code(204).send(null);
      },
    );
  };
}
