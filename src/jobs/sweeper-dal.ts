// The sweeper's statements: stuck pulls, and idempotency keys that expire (log lines: in
// log-retention-dal.ts). The sweep's own jobs are queued here too (graphile-worker's add_job).
import { sql } from 'kysely';
import type pg from 'pg';
import type { Queryable } from '../db/database.ts';

/** Running frames with a replica of the current rollout pulling since before `cutoff`. */
export async function framesPullingSince(q: Queryable, cutoff: Date) {
  const rows = await q
    .selectFrom('frame_replicas as r')
    .innerJoin('frames as f', 'f.id', 'r.frame_id')
    .select('f.id')
    .distinct()
    .where('r.state', '=', 'pulling')
    .where('r.since', '<', cutoff)
    .where('f.desired_state', '=', 'running')
    .whereRef(
      'r.generation',
      '>=',
      sql`(select max(d.generation) from deployments d where d.frame_id = f.id)`,
    )
    .execute();
  return rows.map((r) => r.id);
}

export function lockFrameDesiredState(q: Queryable, frameId: string) {
  return q
    .selectFrom('frames')
    .select(['id', 'desired_state'])
    .where('id', '=', frameId)
    .forUpdate()
    .executeTakeFirst();
}

/** When the frame's longest-pulling replica began pulling, if one is pulling. */
export async function oldestPullSince(q: Queryable, frameId: string) {
  const row = await q
    .selectFrom('frame_replicas')
    .select('since')
    .where('frame_id', '=', frameId)
    .where('state', '=', 'pulling')
    .orderBy('since')
    .executeTakeFirst();
  return row?.since;
}

export async function deleteIdempotencyKeysBefore(q: Queryable, before: Date) {
  await q.deleteFrom('idempotency_keys').where('created_at', '<', before).execute();
}

/** Queues a sweep at `runAt`; one job per key, however many instances ask. */
export async function queueSweep(q: Queryable, runAt: Date, jobKey: string) {
  await sql`select graphile_worker.add_job('sweep', '{}'::json, run_at := ${runAt}::timestamptz,
    job_key := ${jobKey}::text)`.execute(q);
}

/**
 * Asks for the minute sweep at `runAt`, keeping an earlier time already asked for. On the bare
 * pool: the worker has no query builder, and asks outside any transaction.
 */
export async function askForMinuteSweep(pool: pg.Pool, runAt: Date) {
  await pool.query(
    `select graphile_worker.add_job('sweep', '{}'::json, run_at := $1::timestamptz,
      job_key := 'sweep-every-minute', job_key_mode := 'preserve_run_at')`,
    [runAt],
  );
}
