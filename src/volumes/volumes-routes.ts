// Routes of a frame's volumes (CONTRACT 5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { frameScope } from '../frames/frame-scope.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { VolumesService } from './volumes-service.ts';
import { ApplyQuery, FrameParams } from '../frames/frames-schemas.ts';
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
          summary:
            'Add a volume (admin); mounted by the next rollout (swarm, kubernetes: at once), or at once with ?deploy=true',
          params: FrameParams,
          querystring: ApplyQuery,
          body: S.VolumeBody,
          response: { 201: S.AddedVolume, ...problemResponses },
        },
      },
      async (req, reply) => {
        const { deploy } = req.query;
        const added = await volumes.add(actorOf(req), frameScope(req.params), req.body, deploy);
        return reply.code(201).send(added);
      },
    );

    app.delete(
      `${base}/volumes/:volume_id`,
      {
        schema: {
          tags,
          summary:
            'Remove a volume (admin); 200 with the config release when ?deploy=true, else 204',
          params: S.VolumeParams,
          querystring: ApplyQuery,
          response: { 200: S.RemovedVolume, 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        const { params, query } = req;
        const scope = frameScope(params);
        const deployment = await volumes.remove(
          actorOf(req),
          scope,
          params.volume_id,
          query.deploy,
        );
        return deployment ? { deployment } : reply.code(204).send(null);
      },
    );
  };
}
