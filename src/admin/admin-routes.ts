// The operator API (CONTRACT 7), behind ADMIN_TOKEN.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import { IdParam, problemResponses, Timestamp } from '../http/schemas.ts';
import type { AgentsService } from '../agent-api/agents-service.ts';
import { AgentBody, NewAgent } from '../agent-api/agents-schemas.ts';
import type { BillingService } from './billing-service.ts';
import type { TransfersService } from './transfers-service.ts';
import {
  BillingBody,
  NewOwnerBody,
  NewProjectOwnerBody,
  OrgBilling,
  OrgOwner,
  ProjectOwner,
  TeamOwner,
  UserBilling,
} from './admin-schemas.ts';

export interface TimeRules {
  runDue(now: Date): Promise<void>;
}

interface Deps {
  clock: Clock;
  testClock: boolean;
  timeRules: TimeRules;
  agents: AgentsService;
  billing: BillingService;
  transfers: TransfersService;
}

export function adminRoutes({
  clock,
  testClock,
  timeRules,
  agents,
  billing,
  transfers,
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
          body: BillingBody,
          response: { 200: UserBilling, ...problemResponses },
        },
      },
      async (req) => billing.setUser(req.params.user_id, req.body.status),
    );

    app.put(
      '/v2/admin/orgs/:org_id/billing',
      {
        config,
        schema: {
          tags,
          summary:
            "Set an organization's billing: past_due suspends the frames of the projects it owns, active restores them",
          params: Type.Object({ org_id: IdParam('org') }),
          body: BillingBody,
          response: { 200: OrgBilling, ...problemResponses },
        },
      },
      async (req) => billing.setOrg(req.params.org_id, req.body.status),
    );

    app.post(
      '/v2/admin/teams/:team_id/owner',
      {
        config,
        schema: {
          tags,
          summary: "Transfer a team's ownership to one of its members; the old owner becomes admin",
          params: Type.Object({ team_id: IdParam('team') }),
          body: NewOwnerBody,
          response: { 200: TeamOwner, ...problemResponses },
        },
      },
      async (req) =>
        transfers.transferTeam(req.params.team_id, req.body.user_id, { requestId: req.id }),
    );

    app.post(
      '/v2/admin/orgs/:org_id/owner',
      {
        config,
        schema: {
          tags,
          summary:
            "Transfer an organization's ownership to one of its members; the old owner becomes admin",
          params: Type.Object({ org_id: IdParam('org') }),
          body: NewOwnerBody,
          response: { 200: OrgOwner, ...problemResponses },
        },
      },
      async (req) =>
        transfers.transferOrg(req.params.org_id, req.body.user_id, { requestId: req.id }),
    );

    app.post(
      '/v2/admin/projects/:project_id/owner',
      {
        config,
        schema: {
          tags,
          summary:
            'Give a project to a user or an organization; grants stay and its frames keep running',
          params: Type.Object({ project_id: IdParam('prj') }),
          body: NewProjectOwnerBody,
          response: { 200: ProjectOwner, ...problemResponses },
        },
      },
      async (req) =>
        transfers.transferProject(req.params.project_id, req.body, { requestId: req.id }),
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
