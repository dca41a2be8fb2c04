import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { actorOf, agentOf } from '../http/auth.ts';
import { ListQuery, NoContent, problemResponses } from '../http/schemas.ts';
import { ProjectParams } from '../projects/projects-schemas.ts';
import type { AgentsService } from './agents-service.ts';
import type { SyncService } from './sync-service.ts';
import * as S from './agents-schemas.ts';

export function agentRoutes({
  agents,
  sync,
}: {
  agents: AgentsService;
  sync: SyncService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['agents'];

    app.post(
      '/v2/projects/:project_id/agents',
      {
        config: {
          secretAnswer:
            'If it was lost, remove the agent it registered (GET /v2/projects/<id>/agents lists them) and register it again with a new Idempotency-Key.',
        },
        schema: {
          tags,
          summary: 'Register a self-hosted agent (admin); the token is shown once',
          params: ProjectParams,
          body: S.AgentBody,
          response: { 201: S.NewAgent, ...problemResponses },
        },
      },
      async (req, reply) =>
        reply
          .code(201)
          .send(await agents.registerSelfHosted(actorOf(req), req.params.project_id, req.body)),
    );

    app.get(
      '/v2/projects/:project_id/agents',
      {
        schema: {
          tags,
          summary: "A project's self-hosted agents",
          params: ProjectParams,
          querystring: ListQuery,
          response: { 200: S.AgentList, ...problemResponses },
        },
      },
      async (req) =>
        agents.list(actorOf(req), req.params.project_id, req.query.limit ?? 50, req.query.cursor),
    );

    app.delete(
      '/v2/projects/:project_id/agents/:agent_id',
      {
        schema: {
          tags,
          summary: 'Remove a self-hosted agent (admin); refused while frames run on it',
          params: S.AgentParams,
          response: { 204: NoContent, ...problemResponses },
        },
      },
      async (req, reply) => {
        await agents.remove(actorOf(req), req.params.project_id, req.params.agent_id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v2/agent/sync',
      {
        // The answer carries env values, which are sealed at rest: not kept for a replay either.
        config: {
          auth: 'agent',
          secretAnswer:
            'Sync again with a new Idempotency-Key: each answer is the current desired state.',
        },
        schema: {
          tags,
          summary:
            "The agent's heartbeat, report and instructions; ?wait=N holds the answer until the desired state changes",
          security: [{ agent: [] }],
          querystring: S.SyncQuery,
          body: Type.Optional(S.SyncBody),
          response: { 200: S.SyncAnswer, ...problemResponses },
        },
      },
      async (req, reply) => {
        // A client that goes away ends the hold at once. The response's close, not the
        // request's: since Node.js 16 a request closes as soon as its body has been read.
        const gone = new AbortController();
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) gone.abort();
        });
        return sync.sync(agentOf(req), req.body ?? {}, req.query.wait ?? 0, gone.signal);
      },
    );
  };
}
