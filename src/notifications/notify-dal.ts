// The statements that queue notifications, in the caller's transaction: which endpoints want an
// event, and each delivery written together with the graphile-worker job that sends it.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';

/** graphile-worker's tries of one job: only a job that throws (the database away) uses them;
 *  a failed send is retried by our own schedule (retry.ts), one job per try. */
const JOB_ATTEMPTS = 10;
export const DELIVERY_TASK = 'deliver_notification';

const wants = (type: string) => sql<boolean>`${type} = any(e.events)`;

/** The enabled endpoints of the frame's project that want `type`, with the project and frame. */
export function endpointsForFrame(q: Queryable, frameId: string, type: string) {
  return q
    .selectFrom('frames as f')
    .innerJoin('projects as p', 'p.id', 'f.project_id')
    .innerJoin('notification_endpoints as e', 'e.project_id', 'p.id')
    .select(['e.id as endpoint_id', 'p.id as project_id', 'p.name as project_name'])
    .select(['f.name as frame_name', 'f.space_id', 'f.preview_of'])
    .where('f.id', '=', frameId)
    .where('e.enabled', '=', true)
    .where(wants(type))
    .orderBy('e.id')
    .execute();
}

/**
 * The enabled endpoints that want `type` of the projects a member of team (or org) `teamId`
 * reaches through it: those shared with the team, and those the org owns (unless its base role
 * gives a plain member nothing).
 */
export function endpointsForTeam(q: Queryable, teamId: string, role: Role, type: string) {
  return q
    .selectFrom('notification_endpoints as e')
    .innerJoin('projects as p', 'p.id', 'e.project_id')
    .select(['e.id as endpoint_id', 'p.id as project_id', 'p.name as project_name'])
    .where('e.enabled', '=', true)
    .where(wants(type))
    .where((w) => {
      const shared = w(
        'p.id',
        'in',
        w.selectFrom('grants').select('project_id').where('team_id', '=', teamId),
      );
      const owned = w('p.org_id', '=', teamId);
      // A plain member of an org has its base role on its projects; 'none' gives nothing.
      const baseGives = w.exists(
        w
          .selectFrom('teams as o')
          .select('o.id')
          .where('o.id', '=', teamId)
          .where('o.base_role', '<>', 'none'),
      );
      return w.or([shared, role === 'member' ? w.and([owned, baseGives]) : owned]);
    })
    .orderBy('e.id')
    .execute();
}

/** The team (or org) and the user a membership event names. */
export function teamAndUser(q: Queryable, teamId: string, userId: string) {
  return q
    .selectFrom('teams as t')
    .innerJoin('users as u', (j) => j.on('u.id', '=', userId))
    .select(['t.name as team_name', 't.kind', 'u.name as user_name', 'u.email'])
    .where('t.id', '=', teamId)
    .executeTakeFirst();
}

export interface NewDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The event as JSON text. */
  body: string;
  manual: boolean;
  redelivery_of: string | null;
  next_attempt_at: Date;
  created_at: Date;
}

/** Writes the deliveries and queues the job of each (keyed by its id), in one statement. */
export async function queueDeliveries(q: Queryable, rows: NewDelivery[]) {
  if (rows.length === 0) return;
  await q
    .with('d', (w) => w.insertInto('notification_deliveries').values(rows).returning('id'))
    .selectFrom('d')
    .select(
      sql`graphile_worker.add_job(${DELIVERY_TASK}::text,
        json_build_object('delivery_id', d.id), job_key := d.id,
        max_attempts := ${JOB_ATTEMPTS}::int)`.as('job'),
    )
    .execute();
}

/**
 * Queues the delivery's job to run at `runAt` (the job's time is the database's real time),
 * replacing one that waits under its key.
 */
export async function queueAttempt(q: Queryable, deliveryId: string, runAt: Date) {
  await sql`select graphile_worker.add_job(${DELIVERY_TASK}::text,
    json_build_object('delivery_id', ${deliveryId}::text), run_at := ${runAt}::timestamptz,
    job_key := ${deliveryId}::text, max_attempts := ${JOB_ATTEMPTS}::int)`.execute(q);
}
