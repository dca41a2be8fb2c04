import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf } from '../http/auth.ts';
import { jsonOrText } from '../http/json-text.ts';
import { ListQuery, problemResponses } from '../http/schemas.ts';
import { ProjectParams } from '../projects/projects-schemas.ts';
import { etagOf } from './frame-view.ts';
import type { FrameOpsService } from './frame-ops-service.ts';
import type { FramesService } from './frames-service.ts';
import * as S from './frames-schemas.ts';

export const frameUrl = (p: { project_id: string; space_id: string; frame_id: string }) =>
  `/v2/projects/${p.project_id}/spaces/${p.space_id}/frames/${p.frame_id}`;

export function frameRoutes({
  frames,
  frameOps,
}: {
  frames: FramesService;
  frameOps: FrameOpsService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['frames'];
    const base = '/v2/projects/:project_id/spaces/:space_id/frames';
    const F = { 200: Type.Ref('Frame'), ...problemResponses };
    const Accepted = { 202: Type.Ref('Frame'), ...problemResponses };

    app.post(
      base,
      {
        schema: {
          tags,
          summary: 'Create a frame (admin)',
          params: S.SpaceFramesParams,
          body: S.CreateFrameBody,
          response: { 201: Type.Ref('Frame'), ...problemResponses },
        },
      },
      async (req, reply) => {
        const f = await frames.create(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.body,
        );
        return reply
          .code(201)
          .header('location', frameUrl({ ...req.params, frame_id: f.id }))
          .header('etag', etagOf(f))
          .send(f);
      },
    );

    app.get(
      base,
      {
        schema: {
          tags,
          summary: 'Frames of a space',
          params: S.SpaceFramesParams,
          querystring: ListQuery,
          response: { 200: S.FrameList, ...problemResponses },
        },
      },
      async (req) =>
        frames.list(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
    );

    app.get(
      '/v2/projects/:project_id/frames',
      {
        schema: {
          tags,
          summary: 'Frames of every space of a project',
          params: ProjectParams,
          querystring: ListQuery,
          response: { 200: S.FrameList, ...problemResponses },
        },
      },
      async (req) =>
        frames.list(
          actorOf(req),
          req.params.project_id,
          undefined,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
    );

    app.get(
      `${base}/:frame_id`,
      {
        schema: {
          tags,
          summary: 'A frame; with ?wait_for=<status>&timeout=<s> the answer waits for that status',
          params: S.FrameParams,
          querystring: S.FrameReadQuery,
          response: F,
        },
      },
      async (req, reply) => {
        const { wait_for, timeout } = req.query;
        const { project_id, space_id, frame_id } = req.params;
        if (!wait_for) {
          const serialize = (view: unknown) => reply.serialize(view) as string;
          const a = await frames.answer(actorOf(req), project_id, space_id, frame_id, serialize);
          reply.header('etag', a.etag);
          return jsonOrText(reply, a.body);
        }
        const f = await frames.get(actorOf(req), project_id, space_id, frame_id, {
          for: wait_for,
          timeoutSeconds: timeout ?? 30,
        });
        // The frame is returned, not the reply: a returned reply is awaited until the answer
        // is written (an end-of-stream listener on every read).
        reply.header('etag', etagOf(f));
        return f;
      },
    );

    app.patch(
      `${base}/:frame_id`,
      {
        schema: {
          tags,
          summary:
            'Update settings (member); a port change re-rolls a running frame; ?deploy=true releases the change; If-Match is honoured',
          params: S.FrameParams,
          querystring: S.ApplyQuery,
          body: S.UpdateFrameBody,
          response: F,
        },
      },
      async (req, reply) => {
        const ifMatch =
          typeof req.headers['if-match'] === 'string' ? req.headers['if-match'] : undefined;
        const f = await frames.update(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
          req.body,
          ifMatch,
          req.query.deploy,
        );
        return reply.header('etag', etagOf(f)).send(f);
      },
    );

    app.delete(
      `${base}/:frame_id`,
      {
        schema: {
          tags,
          summary: 'Delete a frame (admin); answers what it released',
          params: S.FrameParams,
          response: { 200: S.DeletedFrame, ...problemResponses },
        },
      },
      async (req) =>
        frames.remove(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
        ),
    );

    for (const op of ['stop', 'start'] as const) {
      app.post(
        `${base}/:frame_id/${op}`,
        {
          schema: {
            tags,
            summary: `${op === 'stop' ? 'Stop' : 'Start'} a frame (member); applied asynchronously`,
            params: S.FrameParams,
            response: Accepted,
          },
        },
        async (req, reply) => {
          const f = await frameOps[op](
            actorOf(req),
            req.params.project_id,
            req.params.space_id,
            req.params.frame_id,
          );
          // Returned, not sent: a returned reply makes Fastify wait for the answer's end.
          reply.code(202).header('location', frameUrl(req.params));
          return f;
        },
      );
    }
  };
}
