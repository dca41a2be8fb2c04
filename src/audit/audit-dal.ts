// The audit log: written in the same transaction as the change it describes.
import type { Queryable } from '../db/database.ts';
import type { Actor } from '../actor.ts';
import { newId } from '../ids.ts';

export interface AuditEntry {
  teamId?: string | null;
  projectId?: string | null;
  action: string; // e.g. "member.role_changed"
  targetType: string;
  targetId: string;
  before?: unknown;
  after?: unknown;
}

// The operator (ADMIN_TOKEN) is no user: its records carry a request id and no actor_id.
type AuditActor = (Pick<Actor, 'requestId'> & { userId: string | null }) | null;

/** The audit record's row; `before` and `after` as values (jsonb). */
export function auditRow(actor: AuditActor, at: Date, e: AuditEntry) {
  return {
    id: newId('audit', at),
    team_id: e.teamId ?? null,
    project_id: e.projectId ?? null,
    actor_id: actor?.userId ?? null,
    action: e.action,
    target_type: e.targetType,
    target_id: e.targetId,
    before: e.before ?? null,
    after: e.after ?? null,
    request_id: actor?.requestId ?? null,
    at,
  };
}

export async function recordAudit(q: Queryable, actor: AuditActor, at: Date, e: AuditEntry) {
  const row = auditRow(actor, at, e);
  await q
    .insertInto('audit_events')
    .values({
      ...row,
      before: row.before === null ? null : JSON.stringify(row.before),
      after: row.after === null ? null : JSON.stringify(row.after),
    })
    .execute();
}

export function listAudit(
  q: Queryable,
  scope: { teamId: string } | { projectId: string },
  limit: number,
  beforeId?: string,
) {
  let query = q.selectFrom('audit_events').selectAll();
  query =
    'teamId' in scope
      ? query.where('team_id', '=', scope.teamId)
      : query.where('project_id', '=', scope.projectId);
  if (beforeId) query = query.where('id', '<', beforeId);
  return query
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}
