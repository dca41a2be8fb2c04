// Routes of a frame's volumes (CONTRACT 5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { frameScope } from '../frames/frame-scope.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { VolumesService } from './volumes-service.ts';
import { FrameParams } from '../frames/frames-schemas.ts';
import * as S from './volumes-schemas.ts';

export function volumeRoutes({ volumes }: { volumes: VolumesService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['frames'];
    const base = '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id';

    app.get(
      `${base}/volumes`,
      {
        schema: {
          tags,
          summary: 'Volumes of a frame',
          params: FrameParams,
          querystring: ListQuery,
          response: { 200: S.VolumeList, ...problemResponses },
        },
      },
      async (req) =>
        volumes.list(actorOf(req), frameScope(req.params), req.query.limit ?? 50, req.query.cursor),
    );

    app.post(
      `${base}/volumes`,
      {
        schema: {
          tags,
          summary: 'Add a volume (admin); the agent mounts it on its next rollout',
          params: FrameParams,
          body: S.VolumeBody,
          response: { 201: S.Volume, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply.code(201).send(await volumes.add(actorOf(req), frameScope(req.params), req.body)),
    );

    app.delete(
      `${base}/volumes/:volume_id`,
      {
        schema: {
          tags,
          summary: 'Remove a volume (admin)',
          params: S.VolumeParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await volumes.remove(actorOf(req), frameScope(req.params), req.params.volume_id);
        return reply.code(204).send(null);
      },
    );
  };
}
