// The operator API (CONTRACT 7), behind ADMIN_TOKEN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import { IdParam, problemResponses, StringEnum, Timestamp } from '../http/schemas.ts';
import type { AgentsService } from '../agent-api/agents-service.ts';
import { AgentBody, NewAgent } from '../agent-api/agents-schemas.ts';
import type { BillingService } from './billing-service.ts';

export interface TimeRules {
  runDue(now: Date): Promise<void>;
}

interface Deps {
  clock: Clock;
  testClock: boolean;
  timeRules: TimeRules;
  agents: AgentsService;
  billing: BillingService;
}

export function adminRoutes({
  clock,
  testClock,
  timeRules,
  agents,
  billing,
}: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const tags = ['operator'];
    const config = { auth: 'admin' as const };

    app.post(
      '/v2/admin/agents',
      {
        config: {
          ...config,
          secretAnswer: 'If it was lost, register the agent again with a new Idempotency-Key.',
        },
        schema: {
          tags,
          summary: 'Register a cloud agent; the token is shown once',
          body: AgentBody,
          response: { 201: NewAgent, ...problemResponses },
        },
      },
      async (req, reply) => reply.code(201).send(await agents.registerCloud(req.body)),
    );

    app.put(
      '/v2/admin/users/:user_id/billing',
      {
        config,
        schema: {
          tags,
          summary:
            "Set a user's billing: past_due suspends the frames of their projects, active restores them",
          params: Type.Object({ user_id: IdParam('usr') }),
          body: Type.Object(
            { status: StringEnum(['active', 'past_due']) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({
              user_id: Type.String(),
              status: Type.String(),
              frames_affected: Type.Integer(),
            }),
            ...problemResponses,
          },
        },
      },
      async (req) => billing.set(req.params.user_id, req.body.status),
    );

    app.post(
      '/v2/admin/clock',
      {
        config,
        schema: {
          tags,
          summary:
            'Move the service clock forward (TEST_CLOCK=1 only) and run the time rules now due',
          body: Type.Object(
            { advance_seconds: Type.Number({ minimum: 0, maximum: 10 * 365 * 86400 }) },
            { additionalProperties: false },
          ),
          response: { 200: Type.Object({ now: Timestamp }), ...problemResponses },
        },
      },
      async (req) => {
        if (!testClock)
          throw new AppError(
            404,
            'route_not_found',
            'Not found',
            'The test clock is disabled (TEST_CLOCK is not 1).',
          );
        const now = await clock.advance(req.body.advance_seconds);
        await timeRules.runDue(now);
        return { now: now.toISOString() };
      },
    );
  };
}
