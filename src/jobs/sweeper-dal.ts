// The sweeper's statements: stuck pulls, and what expires (idempotency keys, log lines). The
// sweep's own jobs are queued here too (graphile-worker's add_job).
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

/**
 * The one statement that prunes log lines: those older than `before` (through the index on
 * `at`, migrations/0014), and, for each frame, all but its newest `linesPerFrame`. A frame can
 * hold more than that only if its newest and oldest ids lie that far apart; two probes of
 * frame_logs_frame per frame tell, so only frames near the cap are walked, and only over the
 * lines they keep. No part reads the whole table. The two deletes take disjoint rows (`at`
 * splits them), as one statement must not delete a row twice.
 */
export function pruneLogsStatement(before: Date, linesPerFrame: number) {
  return sql<{ by_age: number; over_cap: number }>`with by_age as (
      delete from frame_logs where at < ${before} returning 1
    ), over_cap as (
      delete from frame_logs l
      using frames f
      cross join lateral (
        select k.id as floor from frame_logs k where k.frame_id = f.id
        order by k.id desc offset ${linesPerFrame} limit 1) c
      where (select max(m.id) - min(m.id) from frame_logs m where m.frame_id = f.id)
          >= ${linesPerFrame}
        and l.frame_id = f.id and l.id <= c.floor and l.at >= ${before}
      returning 1
    )
    select (select count(*) from by_age) as by_age, (select count(*) from over_cap) as over_cap`;
}

/** Prunes log lines; answers how many went for their age and how many over the cap. */
export async function pruneLogs(q: Queryable, before: Date, linesPerFrame: number) {
  const { rows } = await pruneLogsStatement(before, linesPerFrame).execute(q);
  return rows[0] ?? { by_age: 0, over_cap: 0 };
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
