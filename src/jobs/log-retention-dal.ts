// What the sweeper keeps of each frame's log lines (issue 39): lines newer than the retention's
// age, and of those each frame's newest within its line and byte bounds. Every delete takes at
// most LOG_DELETE_BATCH lines, oldest first, and commits on its own, so a frame that grew far
// past a bound (or an operator who lowered one) never makes one long statement that holds the
// lines' locks and the WAL for the whole cut.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { LogRetention } from '../config.ts';

export const LOG_DELETE_BATCH = 5000;

type Cut = { where: ReturnType<typeof sql>; oldest: ReturnType<typeof sql> };

/** Deletes one batch, the oldest lines the cut picks; answers how many went. */
async function deleteBatch(q: Queryable, cut: Cut) {
  const { rows } = await sql<{ n: number }>`with gone as (
      delete from frame_logs where id in (
        ${batchQuery(cut)})
      returning 1)
    select count(*) as n from gone`.execute(q);
  return rows[0]?.n ?? 0;
}

async function deleteAll(q: Queryable, cut: Cut) {
  let total = 0;
  for (;;) {
    const n = await deleteBatch(q, cut);
    total += n;
    if (n < LOG_DELETE_BATCH) return total;
  }
}

/**
 * Frames holding more than `linesPerFrame` lines, with the id of the newest line past it. Two
 * probes of frame_logs_frame per frame (its newest and oldest ids) tell which frames may be over,
 * so only those are walked, and only over the lines they keep.
 */
function framesOverLines(q: Queryable, linesPerFrame: number) {
  return sql<{ frame_id: string; floor: number }>`select f.id as frame_id, c.floor
    from frames f
    cross join lateral (
      select k.id as floor from frame_logs k where k.frame_id = f.id
      order by k.id desc offset ${linesPerFrame} limit 1) c
    where (select max(m.id) - min(m.id) from frame_logs m where m.frame_id = f.id)
      >= ${linesPerFrame}`
    .execute(q)
    .then((r) => r.rows);
}

/**
 * Frames whose lines hold more than `bytesPerFrame` bytes (frame_log_sizes, kept by triggers),
 * with the id of the newest line that no longer fits: the lines after it are the newest that do.
 */
function framesOverBytes(q: Queryable, bytesPerFrame: number) {
  return sql<{ frame_id: string; floor: number }>`select s.frame_id, c.floor
    from frame_log_sizes s
    cross join lateral (
      select w.id as floor from (
        select l.id, sum(octet_length(l.line)) over (order by l.id desc) as kept
        from frame_logs l where l.frame_id = s.frame_id) w
      where w.kept > ${bytesPerFrame} order by w.id desc limit 1) c
    where s.bytes > ${bytesPerFrame}`
    .execute(q)
    .then((r) => r.rows);
}

/**
 * Lines older than `before`, oldest first, through frame_logs_at (migrations/0014): lines arrive
 * with the agent's time, so `at` does not follow the id, and an order by id would walk the table.
 */
export const ageCut = (before: Date): Cut => ({ where: sql`at < ${before}`, oldest: sql`at` });

/** A frame's lines up to `floor`, oldest first, through frame_logs_frame. */
const frameCut = (f: { frame_id: string; floor: number }): Cut => ({
  where: sql`frame_id = ${f.frame_id} and id <= ${f.floor}`,
  oldest: sql`id`,
});

/** The statement of one batch, for a test to read its plan. */
export const batchQuery = ({ where, oldest }: Cut) =>
  sql`select id from frame_logs where ${where} order by ${oldest} limit ${LOG_DELETE_BATCH}`;

export interface Pruned {
  by_age: number;
  over_lines: number;
  over_bytes: number;
}

/** Prunes log lines by the retention, as of `now`; answers how many went for which bound. */
export async function pruneLogs(q: Queryable, now: Date, r: LogRetention): Promise<Pruned> {
  const before = new Date(now.getTime() - r.days * 86400_000);
  const by_age = await deleteAll(q, ageCut(before));
  let over_lines = 0;
  for (const f of await framesOverLines(q, r.linesPerFrame))
    over_lines += await deleteAll(q, frameCut(f));
  let over_bytes = 0;
  for (const f of await framesOverBytes(q, r.bytesPerFrame))
    over_bytes += await deleteAll(q, frameCut(f));
  return { by_age, over_lines, over_bytes };
}
