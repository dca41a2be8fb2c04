// The delivery job's statements: the delivery it sends (locked while it does), the log of
// tries, the endpoint's failure streak, and the log's pruning.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/**
 * The delivery with its endpoint, if it is pending and no other job holds it, locked until
 * this transaction ends (SKIP LOCKED): two jobs for one delivery never both send it.
 */
export function pendingDeliveryForUpdate(q: Queryable, id: string) {
  return q
    .selectFrom('notification_deliveries as d')
    .innerJoin('notification_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('projects as p', 'p.id', 'e.project_id')
    .select(['d.id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.body', 'd.manual'])
    .select(['d.attempts', 'd.next_attempt_at', 'd.created_at'])
    .select(['e.url', 'e.format', 'e.secret_sealed', 'e.enabled', 'e.project_id'])
    .select(['e.previous_secret_sealed', 'e.previous_secret_expires_at'])
    .select('p.name as project_name')
    .where('d.id', '=', id)
    .where('d.status', '=', 'pending')
    .forUpdate('d')
    .skipLocked()
    .executeTakeFirst();
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  at: Date;
  ok: boolean;
  status_code: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

export async function insertAttempt(q: Queryable, row: AttemptRow) {
  await q.insertInto('notification_attempts').values(row).execute();
}

/** After a try: pending again at `next`, or finished (succeeded or failed) at `at`. */
export async function afterAttempt(
  q: Queryable,
  id: string,
  o: { attempts: number; at: Date; ok: boolean; next: Date | undefined; error: string | null },
) {
  const finished = o.ok || o.next === undefined;
  await q
    .updateTable('notification_deliveries')
    .set({
      attempts: o.attempts,
      status: o.ok ? 'succeeded' : finished ? 'failed' : 'pending',
      next_attempt_at: finished ? null : (o.next ?? null),
      finished_at: finished ? o.at : null,
      last_error: o.error,
    })
    .where('id', '=', id)
    .execute();
}

/** Ends a pending delivery without a try (its endpoint is off). */
export async function endUntried(q: Queryable, id: string, at: Date, error: string) {
  await q
    .updateTable('notification_deliveries')
    .set({ status: 'failed', next_attempt_at: null, finished_at: at, last_error: error })
    .where('id', '=', id)
    .execute();
}

/** Moves the endpoint's failure streak after a try; answers the streak and whether it is on. */
export function moveStreak(q: Queryable, endpointId: string, ok: boolean, at: Date) {
  return q
    .updateTable('notification_endpoints')
    .set(
      ok
        ? { consecutive_failures: 0, failing_since: null }
        : {
            consecutive_failures: sql`consecutive_failures + 1`,
            failing_since: sql`coalesce(failing_since, ${at}::timestamptz)`,
          },
    )
    .where('id', '=', endpointId)
    .returning(['consecutive_failures', 'failing_since', 'enabled'])
    .executeTakeFirst();
}

/** Turns the endpoint off for failing; the row if it was on. */
export function disableFailing(q: Queryable, endpointId: string, at: Date) {
  return q
    .updateTable('notification_endpoints')
    .set({ enabled: false, disabled_reason: 'failing', disabled_at: at, updated_at: at })
    .where('id', '=', endpointId)
    .where('enabled', '=', true)
    .returning(['id', 'project_id', 'url', 'consecutive_failures', 'failing_since'])
    .executeTakeFirst();
}

/** Pending deliveries due by `now` (service time), oldest first, at most `limit`. */
export async function dueDeliveries(q: Queryable, now: Date, limit: number) {
  return q
    .selectFrom('notification_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
}

/**
 * Forgets the endpoint's finished deliveries beyond the newest `keep`, and those created
 * before `before`; their tries go with them (ON DELETE CASCADE).
 */
export async function pruneLog(q: Queryable, endpointId: string, keep: number, before: Date) {
  await sql`delete from notification_deliveries d where d.endpoint_id = ${endpointId}
    and d.status <> 'pending'
    and (d.created_at < ${before} or d.id < (select id from notification_deliveries
      where endpoint_id = ${endpointId} order by id desc offset ${keep - 1} limit 1))`.execute(q);
}

/**
 * Everyone who may reach the project by some path (its owner, its org's members, the members
 * of teams it is shared with), with their address: the access module then says who of them
 * is an admin.
 */
export function peopleOfProject(q: Queryable, projectId: string) {
  return q
    .selectFrom('users as u')
    .select(['u.id', 'u.email', 'u.name'])
    .where((w) =>
      w.or([
        w('u.id', '=', w.selectFrom('projects').select('owner_id').where('id', '=', projectId)),
        w(
          'u.id',
          'in',
          w
            .selectFrom('team_members as m')
            .innerJoin('projects as p', 'p.org_id', 'm.team_id')
            .select('m.user_id')
            .where('p.id', '=', projectId),
        ),
        w(
          'u.id',
          'in',
          w
            .selectFrom('team_members as m')
            .innerJoin('grants as g', 'g.team_id', 'm.team_id')
            .select('m.user_id')
            .where('g.project_id', '=', projectId),
        ),
      ]),
    )
    .orderBy('u.id')
    .execute();
}
