// Routes of a frame's environment variables (CONTRACT 5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { frameScope } from '../frames/frame-scope.ts';
import { problemResponses } from '../http/schemas.ts';
import type { EnvService } from './env-service.ts';
import { ApplyQuery, FrameParams } from '../frames/frames-schemas.ts';
import * as S from './env-schemas.ts';

export function envRoutes({ env }: { env: EnvService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['frames'];
    const base = '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id';
    const Env = { 200: S.EnvAnswer, ...problemResponses };

    app.get(
      `${base}/env`,
      {
        schema: {
          tags,
          summary: 'Environment variables; viewers see the names with null values',
          params: FrameParams,
          response: Env,
        },
      },
      async (req) => env.get(actorOf(req), frameScope(req.params)),
    );

    app.put(
      `${base}/env`,
      {
        schema: {
          tags,
          summary:
            'Replace every environment variable (member); applied by the next deploy, or at once with ?deploy=true',
          params: FrameParams,
          querystring: ApplyQuery,
          body: S.PutEnvBody,
          response: Env,
        },
      },
      async (req) =>
        env.replace(actorOf(req), frameScope(req.params), req.body.vars, req.query.deploy),
    );

    app.patch(
      `${base}/env`,
      {
        schema: {
          tags,
          summary:
            'Merge environment variables (member); null deletes; applied by the next deploy, or at once with ?deploy=true',
          params: FrameParams,
          querystring: ApplyQuery,
          body: S.PatchEnvBody,
          response: Env,
        },
      },
      async (req) =>
        env.merge(actorOf(req), frameScope(req.params), req.body.vars, req.query.deploy),
    );
  };
}
