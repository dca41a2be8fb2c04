// What the sweeper keeps of frame metrics (migrations/0030): minute and five-minute rows newer
// than METRICS_MINUTE_RETENTION_HOURS, hour rows newer than METRICS_HOUR_RETENTION_DAYS, by the
// service's clock. A sweep each minute finds one minute (and at times one hour) to delete; a
// lowered setting may find much more, so every delete takes at most METRICS_DELETE_BATCH rows,
// oldest first (through the (resolution, at) index), and commits on its own.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { MetricsRetention } from '../config.ts';

export const METRICS_DELETE_BATCH = 10_000;

const TABLES = ['frame_replica_metrics', 'frame_request_metrics'] as const;

/** Deletes one batch of the table's rows of `resolution` older than `before`. */
async function deleteBatch(
  q: Queryable,
  table: (typeof TABLES)[number],
  resolution: number,
  before: Date,
) {
  const { rows } = await sql<{ n: number }>`with gone as (
      delete from ${sql.table(table)} where ctid = any(array(
        select ctid from ${sql.table(table)} where resolution = ${resolution} and at < ${before}
        order by at limit ${METRICS_DELETE_BATCH}))
      returning 1)
    select count(*)::int as n from gone`.execute(q);
  return rows[0]?.n ?? 0;
}

/** The start of the oldest row each resolution keeps, as of `now`. */
export const metricsCutoffs = (now: Date, r: MetricsRetention) => ({
  minute: new Date(now.getTime() - r.minuteHours * 3600_000),
  hour: new Date(now.getTime() - r.hourDays * 86400_000),
});

/**
 * The most rows of one replica (or one frame's requests) that the tables hold after a prune:
 * every minute, five minutes and hour of their retention, each with the one in progress.
 */
export const rowsPerSeriesBound = (r: MetricsRetention) =>
  r.minuteHours * 60 + 1 + r.minuteHours * 12 + 1 + r.hourDays * 24 + 1;

/** Prunes both tables by the retention as of `now`; answers how many rows went. */
export async function pruneMetrics(q: Queryable, now: Date, r: MetricsRetention) {
  const cut = metricsCutoffs(now, r);
  let deleted = 0;
  for (const table of TABLES)
    for (const [resolution, before] of [
      [60, cut.minute],
      [300, cut.minute],
      [3600, cut.hour],
    ] as const)
      for (;;) {
        const n = await deleteBatch(q, table, resolution, before);
        deleted += n;
        if (n < METRICS_DELETE_BATCH) break;
      }
  return deleted;
}
