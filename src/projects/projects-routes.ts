import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { ProjectsService } from './projects-service.ts';
import * as S from './projects-schemas.ts';

export function projectRoutes({
  projects,
}: {
  projects: ProjectsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['projects'];
    const P = { 200: Type.Ref('Project'), ...problemResponses };

    app.post(
      '/v2/projects',
      {
        schema: {
          tags,
          summary: 'Create a project with a space named default (for an org: org_id)',
          body: S.CreateProjectBody,
          response: { 201: Type.Ref('Project'), ...problemResponses },
        },
      },
      async (req, reply) => reply.code(201).send(await projects.create(actorOf(req), req.body)),
    );

    app.get(
      '/v2/projects',
      {
        schema: {
          tags,
          summary: "Owned and shared projects, with the caller's effective role",
          querystring: ListQuery,
          response: { 200: S.ProjectList, ...problemResponses },
        },
      },
      async (req) => projects.list(actorOf(req), req.query.limit ?? 50, req.query.cursor),
    );

    app.get(
      '/v2/projects/:project_id',
      {
        schema: { tags, summary: 'A project', params: S.ProjectParams, response: P },
      },
      async (req) => projects.get(actorOf(req), req.params.project_id),
    );

    app.patch(
      '/v2/projects/:project_id',
      {
        schema: {
          tags,
          summary: 'Rename a project (admin)',
          params: S.ProjectParams,
          body: S.NameBody,
          response: P,
        },
      },
      async (req) => projects.rename(actorOf(req), req.params.project_id, req.body),
    );

    app.delete(
      '/v2/projects/:project_id',
      {
        schema: {
          tags,
          summary: 'Delete a project (owner)',
          params: S.ProjectParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await projects.remove(actorOf(req), req.params.project_id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/v2/projects/:project_id/access',
      {
        schema: {
          tags,
          summary: 'Who reaches the project and why',
          params: S.ProjectParams,
          response: { 200: S.ProjectAccess, ...problemResponses },
        },
      },
      async (req) => projects.access(actorOf(req), req.params.project_id),
    );

    const SP = { 200: Type.Ref('Space'), ...problemResponses };
    app.get(
      '/v2/projects/:project_id/spaces',
      {
        schema: {
          tags,
          summary: 'Spaces of a project',
          params: S.ProjectParams,
          querystring: ListQuery,
          response: { 200: S.SpaceList, ...problemResponses },
        },
      },
      async (req) =>
        projects.listSpaces(
          actorOf(req),
          req.params.project_id,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
    );

    app.post(
      '/v2/projects/:project_id/spaces',
      {
        schema: {
          tags,
          summary: 'Create a space (admin)',
          params: S.ProjectParams,
          body: S.NameBody,
          response: { 201: Type.Ref('Space'), ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(await projects.createSpace(actorOf(req), req.params.project_id, req.body)),
    );

    app.get(
      '/v2/projects/:project_id/spaces/:space_id',
      {
        schema: { tags, summary: 'A space', params: S.SpaceParams, response: SP },
      },
      async (req) => projects.getSpace(actorOf(req), req.params.project_id, req.params.space_id),
    );

    app.patch(
      '/v2/projects/:project_id/spaces/:space_id',
      {
        schema: {
          tags,
          summary: 'Rename a space (admin)',
          params: S.SpaceParams,
          body: S.NameBody,
          response: SP,
        },
      },
      async (req) =>
        projects.renameSpace(actorOf(req), req.params.project_id, req.params.space_id, req.body),
    );

    app.delete(
      '/v2/projects/:project_id/spaces/:space_id',
      {
        schema: {
          tags,
          summary: 'Delete a space (admin)',
          params: S.SpaceParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await projects.removeSpace(actorOf(req), req.params.project_id, req.params.space_id);
        return reply.code(204).send(null);
      },
    );
  };
}
