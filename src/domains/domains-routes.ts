// Routes of a frame's custom domains (CONTRACT 5).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { frameScope } from '../frames/frame-scope.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import type { DomainsService } from './domains-service.ts';
import { FrameParams } from '../frames/frames-schemas.ts';
import * as S from './domains-schemas.ts';

export function domainRoutes({ domains }: { domains: DomainsService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['frames'];
    const base = '/v2/projects/:project_id/spaces/:space_id/frames/:frame_id';

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
        domains.list(actorOf(req), frameScope(req.params), req.query.limit ?? 50, req.query.cursor),
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
        reply.code(201).send(await domains.add(actorOf(req), frameScope(req.params), req.body)),
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
        return domains.verify(actorOf(req), frameScope(p), p.domain_id);
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
        await domains.remove(actorOf(req), frameScope(req.params), req.params.domain_id);
        return reply.code(204).send(null);
      },
    );
  };
}
