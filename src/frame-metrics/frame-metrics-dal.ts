// The sync's ingest of frame metrics (migrations/0030): one statement per table, adding to the
// rows of every resolution at once. The query's statement is in metrics-query-dal.ts.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB, LatencyColumn } from '../db/schema.ts';
import { LATENCY_BOUNDS_MS } from '../agent-api/sync-items.ts';

/** One replica's samples of one sync, added up (metrics-ingest.ts): a row without its place. */
export type ReplicaRow = Omit<DB['frame_replica_metrics'], 'resolution' | 'at'>;

/** One frame's request samples of one sync, added up. */
export interface RequestRow {
  frame_id: string;
  samples: number;
  seconds: number;
  status: [number, number, number, number, number];
  latency: number[];
}

/** The rows a sync adds to: its minute's, five minutes' and hour's, by the service clock. */
export type Buckets = Array<{ resolution: number; at: Date }>;

const bucketValues = (b: Buckets) =>
  sql`(values ${sql.join(b.map((x) => sql`(${x.resolution}::int, ${x.at}::timestamptz)`))})`;

const col = <T, K extends keyof T>(rows: T[], key: K) => rows.map((r) => r[key]);

/**
 * The agent's frames among `ids`, key-share locked in id order: a frame deleted meanwhile then
 * waits for the insert instead of failing its foreign key, and no other write is held up.
 */
const mine = (agentId: string, ids: string[]) => sql`select id from frames
  where agent_id = ${agentId} and id = any(${ids}::text[]) order by id for key share`;

/** Adds the replicas' samples to their rows of each resolution; others' frames are skipped. */
export async function addReplicaMetrics(
  q: Queryable,
  agentId: string,
  rows: ReplicaRow[],
  b: Buckets,
) {
  if (rows.length === 0) return;
  const frames = col(rows, 'frame_id');
  await sql`with mine as (${mine(agentId, [...new Set(frames)])})
    insert into frame_replica_metrics as t (frame_id, resolution, at, replica, samples, seconds,
      cpu_seconds, memory_max_bytes, memory_limit_bytes, net_rx_bytes, net_tx_bytes, restarts)
    select u.frame_id, b.resolution, b.at, u.replica, u.samples, u.seconds, u.cpu, u.mem, u.lim,
      u.rx, u.tx, u.restarts
    from unnest(${frames}::text[], ${col(rows, 'replica')}::int[], ${col(rows, 'samples')}::int[],
      ${col(rows, 'seconds')}::float8[], ${col(rows, 'cpu_seconds')}::float8[],
      ${col(rows, 'memory_max_bytes')}::int8[], ${col(rows, 'memory_limit_bytes')}::int8[],
      ${col(rows, 'net_rx_bytes')}::int8[], ${col(rows, 'net_tx_bytes')}::int8[],
      ${col(rows, 'restarts')}::int8[])
      as u(frame_id, replica, samples, seconds, cpu, mem, lim, rx, tx, restarts)
    join mine on mine.id = u.frame_id
    cross join ${bucketValues(b)} as b(resolution, at)
    order by u.frame_id, b.resolution, u.replica
    on conflict (frame_id, resolution, at, replica) do update set
      samples = t.samples + excluded.samples,
      seconds = t.seconds + excluded.seconds,
      cpu_seconds = t.cpu_seconds + excluded.cpu_seconds,
      memory_max_bytes = greatest(t.memory_max_bytes, excluded.memory_max_bytes),
      memory_limit_bytes = greatest(t.memory_limit_bytes, excluded.memory_limit_bytes),
      net_rx_bytes = coalesce(t.net_rx_bytes + excluded.net_rx_bytes, t.net_rx_bytes,
        excluded.net_rx_bytes),
      net_tx_bytes = coalesce(t.net_tx_bytes + excluded.net_tx_bytes, t.net_tx_bytes,
        excluded.net_tx_bytes),
      restarts = t.restarts + excluded.restarts`.execute(q);
}

/** The histogram's columns, in bucket order (migrations/0030). */
export const LATENCY: LatencyColumn[] = Array.from(
  { length: LATENCY_BOUNDS_MS.length + 1 },
  (_, i) => `latency_${i}` as LatencyColumn,
);
const CLASSES = ['status_1xx', 'status_2xx', 'status_3xx', 'status_4xx', 'status_5xx'];
const list = (names: string[], prefix = '') => sql.raw(names.map((n) => prefix + n).join(', '));
const addedUp = (names: string[]) =>
  sql.raw(names.map((n) => `${n} = t.${n} + excluded.${n}`).join(',\n      '));

/** Adds the edge's samples to their rows of each resolution; other agents' frames are skipped. */
export async function addRequestMetrics(
  q: Queryable,
  agentId: string,
  rows: RequestRow[],
  b: Buckets,
) {
  if (rows.length === 0) return;
  const frames = col(rows, 'frame_id');
  const status = (i: number) => rows.map((r) => r.status[i] ?? 0);
  const latency = LATENCY.map((_, i) => sql`${rows.map((r) => r.latency[i] ?? 0)}::int8[]`);
  const counts = ['s1', 's2', 's3', 's4', 's5', ...LATENCY];
  await sql`with mine as (${mine(agentId, frames)})
    insert into frame_request_metrics as t (frame_id, resolution, at, samples, seconds,
      status_1xx, status_2xx, status_3xx, status_4xx, status_5xx, ${list(LATENCY)})
    select u.frame_id, b.resolution, b.at, u.samples, u.seconds, ${list(counts, 'u.')}
    from unnest(${frames}::text[], ${col(rows, 'samples')}::int[],
      ${col(rows, 'seconds')}::float8[], ${status(0)}::int8[], ${status(1)}::int8[],
      ${status(2)}::int8[], ${status(3)}::int8[], ${status(4)}::int8[], ${sql.join(latency)})
      as u(frame_id, samples, seconds, ${list(counts)})
    join mine on mine.id = u.frame_id
    cross join ${bucketValues(b)} as b(resolution, at)
    order by u.frame_id, b.resolution
    on conflict (frame_id, resolution, at) do update set
      ${addedUp(['samples', 'seconds', ...CLASSES, ...LATENCY])}`.execute(q);
}
