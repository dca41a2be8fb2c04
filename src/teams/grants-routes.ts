import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { GrantsService } from './grants-service.ts';
import * as S from './teams-schemas.ts';

export function grantRoutes({ grants }: { grants: GrantsService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['grants'];

    app.get(
      '/v2/teams/:team_id/grants',
      {
        schema: {
          tags,
          summary: "A team's grants (viewer)",
          params: S.TeamParams,
          querystring: ListQuery,
          response: { 200: S.GrantList, ...problemResponses },
        },
      },
      async (req) =>
        grants.list(actorOf(req), req.params.team_id, req.query.limit ?? 50, req.query.cursor),
    );

    app.post(
      '/v2/teams/:team_id/grants',
      {
        schema: {
          tags,
          summary: 'Share a project with the team (team admin and project owner)',
          params: S.TeamParams,
          body: S.CreateGrantBody,
          response: { 201: Type.Ref('Grant'), ...problemResponses },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await grants.create(actorOf(req), req.params.team_id, req.body)),
    );

    app.patch(
      '/v2/teams/:team_id/grants/:grant_id',
      {
        schema: {
          tags,
          summary: "Change a grant's role (admin; raising it needs the project owner)",
          params: S.GrantParams,
          body: S.GrantRoleBody,
          response: { 200: Type.Ref('Grant'), ...problemResponses },
        },
      },
      async (req) => grants.update(actorOf(req), req.params.team_id, req.params.grant_id, req.body),
    );

    app.delete(
      '/v2/teams/:team_id/grants/:grant_id',
      {
        schema: {
          tags,
          summary: 'Stop sharing a project with the team (admin)',
          params: S.GrantParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await grants.remove(actorOf(req), req.params.team_id, req.params.grant_id);
        return reply.code(204).send(null);
      },
    );
  };
}
