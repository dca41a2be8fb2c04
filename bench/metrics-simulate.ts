// 30 days of frame metrics in a few minutes (bench/metrics.ts, part b): the agent's samples go
// through the sync's own ingest (storeMetrics) and the sweeper's own prune (pruneMetrics), each
// given a simulated service clock that ends now. Each sync adds to the rows of its minute and
// hour only, so what is kept depends on which minutes and hours had a sync, not on how many
// samples each carried: the first 28 days sync every SPARSE_MINUTES (every hour gets its
// rows, the minutes are pruned long before the end anyway), the last 26 hours every minute,
// as an agent syncing its 10-s samples does; the minute rows then hold a full day at the end.
import { sql } from 'kysely';
import { type Database, transaction } from '../src/db/database.ts';
import type { MetricsRetention } from '../src/config.ts';
import { storeMetrics } from '../src/frame-metrics/metrics-ingest.ts';
import { pruneMetrics, rowsPerSeriesBound } from '../src/jobs/metrics-retention-dal.ts';
import { metricsOf, replicasOf } from './metrics-data.ts';

const MINUTE = 60_000;
const SPARSE_MINUTES = 30;
/** The every-minute end: the minute retention and two hours more. */
const denseMinutes = (r: MetricsRetention) => (r.minuteHours + 2) * 60;
/** The sweep runs every minute; here every PRUNE_EVERY syncs of the dense end. */
const PRUNE_EVERY = 10;

export interface Simulated {
  frames: number;
  series: number;
  syncs: number;
  seconds: number;
  rows: number;
  bound: number;
  /** The most rows the tables held after a prune (every tenth one counted). */
  mostAfterPrune: number;
  bytes: number;
  /** What the sync's two statements took, per sync, in ms (median; bench/metrics.ts runs the
   *  simulation with commits that do not wait for the disk). */
  ingestMs: number;
}

async function liveRows(db: Database) {
  const { rows } = await sql<{ n: number }>`select
    (select count(*) from frame_replica_metrics) + (select count(*) from frame_request_metrics)
    as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

async function tableBytes(db: Database) {
  const { rows } = await sql<{ n: number }>`select
    pg_total_relation_size('frame_replica_metrics')
      + pg_total_relation_size('frame_request_metrics') as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** Simulates 30 days of `frameIds` syncing on `agentId`, ending at `end`. */
export async function simulate(
  db: Database,
  agentId: string,
  frameIds: string[],
  r: MetricsRetention,
  end: Date,
  log: (line: string) => void,
): Promise<Simulated> {
  const started = performance.now();
  const days = r.hourDays;
  const dense = denseMinutes(r);
  const times: Date[] = [];
  const first = end.getTime() - days * 1440 * MINUTE;
  const denseFrom = end.getTime() - dense * MINUTE;
  for (let t = first; t < denseFrom; t += SPARSE_MINUTES * MINUTE) times.push(new Date(t));
  for (let t = denseFrom; t <= end.getTime(); t += MINUTE) times.push(new Date(t));
  const series = frameIds.reduce((n, _, i) => n + replicasOf(i) + 1, 0);
  const bound = series * rowsPerSeriesBound(r);
  const report = (seconds: number) => metricsOf(frameIds, seconds);
  const sparse = report(SPARSE_MINUTES * 60);
  const everyMinute = report(60);
  const ingest: number[] = [];
  let mostAfterPrune = 0;
  let prunes = 0;
  for (const [i, now] of times.entries()) {
    const t0 = performance.now();
    const metrics = now.getTime() < denseFrom ? sparse : everyMinute;
    await transaction(db, (trx) => storeMetrics(trx, agentId, metrics, now)); // as a sync does
    ingest.push(performance.now() - t0);
    if (now.getTime() < denseFrom || i % PRUNE_EVERY === 0 || i === times.length - 1) {
      await pruneMetrics(db, now, r);
      // Counted at every tenth prune: a count walks the tables.
      if (++prunes % 10 === 0 || i === times.length - 1)
        mostAfterPrune = Math.max(mostAfterPrune, await liveRows(db));
    }
    if (i % 500 === 0) log(`  ${now.toISOString()}: ${i} of ${times.length} syncs`);
  }
  await sql`vacuum analyze frame_replica_metrics, frame_request_metrics`.execute(db);
  ingest.sort((a, b) => a - b);
  return {
    frames: frameIds.length,
    series,
    syncs: times.length,
    seconds: (performance.now() - started) / 1000,
    rows: await liveRows(db),
    bound,
    mostAfterPrune,
    bytes: await tableBytes(db),
    ingestMs: ingest[Math.floor(ingest.length / 2)] ?? 0,
  };
}
