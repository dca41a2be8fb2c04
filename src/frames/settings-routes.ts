// Routes of a frame's settings: env vars, custom domains and volumes (CONTRACT 5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { DomainsService } from '../domains/domains-service.ts';
import type { EnvService } from '../env/env-service.ts';
import type { VolumesService } from '../volumes/volumes-service.ts';
import { ApplyQuery, FrameParams } from './frames-schemas.ts';
import * as S from './settings-schemas.ts';

export function settingsRoutes({
  env,
  domains,
  volumes,
}: {
  env: EnvService;
  domains: DomainsService;
  volumes: VolumesService;
}): FastifyPluginAsyncTypebox {
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
      async (req) =>
        env.get(actorOf(req), req.params.project_id, req.params.space_id, req.params.frame_id),
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
        env.replace(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
          req.body.vars,
          req.query.deploy,
        ),
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
        env.merge(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
          req.body.vars,
          req.query.deploy,
        ),
    );

    app.get(
      `${base}/domains`,
      {
        schema: {
          tags,
          summary: 'Custom domains of a frame',
          params: FrameParams,
          querystring: ListQuery,
          response: { 200: S.DomainList, ...problemResponses },
        },
      },
      async (req) =>
        domains.list(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
    );

    app.post(
      `${base}/domains`,
      {
        schema: {
          tags,
          summary: 'Claim a hostname (admin): pending until verified by a DNS TXT record',
          params: FrameParams,
          body: S.DomainBody,
          response: { 201: S.Domain, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(
            await domains.add(
              actorOf(req),
              req.params.project_id,
              req.params.space_id,
              req.params.frame_id,
              req.body,
            ),
          ),
    );

    app.post(
      `${base}/domains/:domain_id/verify`,
      {
        schema: {
          tags,
          summary: 'Verify a claim (admin): checks its TXT record, then attaches the hostname',
          params: S.DomainParams,
          response: { 200: S.Domain, ...problemResponses },
        },
      },
      async (req) => {
        const p = req.params;
        return domains.verify(actorOf(req), p.project_id, p.space_id, p.frame_id, p.domain_id);
      },
    );

    app.delete(
      `${base}/domains/:domain_id`,
      {
        schema: {
          tags,
          summary: 'Detach a hostname (admin)',
          params: S.DomainParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await domains.remove(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
          req.params.domain_id,
        );
        return reply.code(204).send(null);
      },
    );

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
        volumes.list(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
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
        reply
          .code(201)
          .send(
            await volumes.add(
              actorOf(req),
              req.params.project_id,
              req.params.space_id,
              req.params.frame_id,
              req.body,
            ),
          ),
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
        await volumes.remove(
          actorOf(req),
          req.params.project_id,
          req.params.space_id,
          req.params.frame_id,
          req.params.volume_id,
        );
        return reply.code(204).send(null);
      },
    );
  };
}
