import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AccessService } from '../access/access-service.ts';
import type { Database } from '../db/database.ts';
import { actorOf } from '../http/auth.ts';
import { decodeCursor, iso, ListQuery, problemResponses, toPage } from '../http/schemas.ts';
import { ProjectParams } from '../projects/projects-schemas.ts';
import { AuditList, TeamParams } from '../teams/teams-schemas.ts';
import { listAudit } from './audit-dal.ts';

export function auditRoutes({
  db,
  access,
}: {
  db: Database;
  access: AccessService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    const page = async (
      scope: Parameters<typeof listAudit>[1],
      query: { limit?: number; cursor?: string },
    ) => {
      const limit = query.limit ?? 50;
      const rows = await listAudit(db, scope, limit, decodeCursor(query.cursor, 1)?.[0]);
      return toPage(
        rows,
        limit,
        (r) => [r.id],
        (r) => ({
          id: r.id,
          action: r.action,
          actor_id: r.actor_id,
          target_type: r.target_type,
          target_id: r.target_id,
          before: r.before ?? null,
          after: r.after ?? null,
          request_id: r.request_id,
          at: iso(r.at),
        }),
      );
    };

    app.get(
      '/v2/teams/:team_id/audit',
      {
        schema: {
          tags: ['teams'],
          summary: "The team's audit log, newest first (admin)",
          params: TeamParams,
          querystring: ListQuery,
          response: { 200: AuditList, ...problemResponses },
        },
      },
      async (req) => {
        await access.requireTeam(actorOf(req).userId, req.params.team_id, 'audit.read');
        return page({ teamId: req.params.team_id }, req.query);
      },
    );

    app.get(
      '/v2/projects/:project_id/audit',
      {
        schema: {
          tags: ['projects'],
          summary:
            "The project's audit log: frames, agents, grants, settings; newest first (admin)",
          params: ProjectParams,
          querystring: ListQuery,
          response: { 200: AuditList, ...problemResponses },
        },
      },
      async (req) => {
        await access.requireProject(actorOf(req).userId, req.params.project_id, 'project.audit');
        return page({ projectId: req.params.project_id }, req.query);
      },
    );
  };
}
