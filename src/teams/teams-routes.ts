import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { jsonOrText } from '../http/json-text.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { TeamsService } from './teams-service.ts';
import type { MembersService } from './members-service.ts';
import * as S from './teams-schemas.ts';

export function teamRoutes({
  teams,
  members,
}: {
  teams: TeamsService;
  members: MembersService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['teams'];
    const T = { 200: Type.Ref('Team'), ...problemResponses };
    const none = { 204: NoContent, ...problemResponses };

    app.get(
      '/v2/teams',
      {
        schema: {
          tags,
          summary: "Teams the caller is in, with the caller's role and the member count",
          querystring: ListQuery,
          response: { 200: S.TeamList, ...problemResponses },
        },
      },
      async (req) => teams.list(actorOf(req), req.query.limit ?? 50, req.query.cursor),
    );

    app.post(
      '/v2/teams',
      {
        schema: {
          tags,
          summary: 'Create a team; the caller becomes its owner',
          body: S.CreateTeamBody,
          response: { 201: Type.Ref('Team'), ...problemResponses },
        },
      },
      async (req, reply) => reply.code(201).send(await teams.create(actorOf(req), req.body)),
    );

    app.get(
      '/v2/teams/:team_id',
      {
        schema: { tags, summary: 'A team (viewer)', params: S.TeamParams, response: T },
      },
      async (req) => teams.get(actorOf(req), req.params.team_id),
    );

    app.patch(
      '/v2/teams/:team_id',
      {
        schema: {
          tags,
          summary: 'Rename a team or change its slug (admin)',
          params: S.TeamParams,
          body: S.UpdateTeamBody,
          response: T,
        },
      },
      async (req) => teams.update(actorOf(req), req.params.team_id, req.body),
    );

    app.delete(
      '/v2/teams/:team_id',
      {
        schema: {
          tags,
          summary: 'Delete a team with its memberships, invitations and grants (owner)',
          params: S.TeamParams,
          response: none,
        },
      },
      async (req, reply) => {
        await teams.remove(actorOf(req), req.params.team_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v2/teams/:team_id/leave',
      {
        schema: {
          tags,
          summary: 'Leave a team (anyone but the owner)',
          params: S.TeamParams,
          response: none,
        },
      },
      async (req, reply) => {
        await teams.leave(actorOf(req), req.params.team_id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v2/teams/:team_id/members',
      {
        schema: {
          tags,
          summary: 'Members of a team (viewer)',
          params: S.TeamParams,
          querystring: ListQuery,
          response: { 200: S.MemberList, ...problemResponses },
        },
      },
      async (req, reply) =>
        jsonOrText(
          reply,
          await members.list(
            actorOf(req),
            req.params.team_id,
            req.query.limit ?? 50,
            req.query.cursor,
          ),
        ),
    );

    app.patch(
      '/v2/teams/:team_id/members/:user_id',
      {
        schema: {
          tags,
          summary: "Change a member's role (admin)",
          params: S.MemberParams,
          body: S.RoleBody,
          response: { 200: Type.Ref('Member'), ...problemResponses },
        },
      },
      async (req) =>
        members.changeRole(actorOf(req), req.params.team_id, req.params.user_id, req.body),
    );

    app.delete(
      '/v2/teams/:team_id/members/:user_id',
      {
        schema: {
          tags,
          summary: 'Remove a member (admin)',
          params: S.MemberParams,
          response: none,
        },
      },
      async (req, reply) => {
        await members.remove(actorOf(req), req.params.team_id, req.params.user_id);
        return reply.code(204).send(null);
      },
    );
  };
}
