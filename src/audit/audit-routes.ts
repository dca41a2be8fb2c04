import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf } from '../http/auth.ts';
import { ListQuery, problemResponses } from '../http/schemas.ts';
import { AuditList, OrgAuditParams, ProjectAuditParams, TeamAuditParams } from './audit-schemas.ts';
import type { AuditService } from './audit-service.ts';

export function auditRoutes({ audit }: { audit: AuditService }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/v2/teams/:team_id/audit',
      {
        schema: {
          tags: ['teams'],
          summary: "The team's audit log, newest first (admin)",
          params: TeamAuditParams,
          querystring: ListQuery,
          response: { 200: AuditList, ...problemResponses },
        },
      },
      async (req) =>
        audit.ofTeam(actorOf(req), req.params.team_id, req.query.limit ?? 50, req.query.cursor),
    );

    app.get(
      '/v2/orgs/:org_id/audit',
      {
        schema: {
          tags: ['orgs'],
          summary: "The organization's audit log, newest first (admin)",
          params: OrgAuditParams,
          querystring: ListQuery,
          response: { 200: AuditList, ...problemResponses },
        },
      },
      async (req) =>
        audit.ofOrg(actorOf(req), req.params.org_id, req.query.limit ?? 50, req.query.cursor),
    );

    app.get(
      '/v2/projects/:project_id/audit',
      {
        schema: {
          tags: ['projects'],
          summary:
            "The project's audit log: frames, agents, grants, settings; newest first (admin)",
          params: ProjectAuditParams,
          querystring: ListQuery,
          response: { 200: AuditList, ...problemResponses },
        },
      },
      async (req) =>
        audit.ofProject(
          actorOf(req),
          req.params.project_id,
          req.query.limit ?? 50,
          req.query.cursor,
        ),
    );
  };
}
