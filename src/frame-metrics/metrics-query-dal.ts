// The statement of a metrics query: whether the frame is in the project and space, and its rows
// of the range, in one round trip and one result row: each column as an array (below), where a
// result row per stored row took longer to parse than to add up. Adding rows up into steps is
// left to metrics-points.ts: summing bigints in SQL goes through numeric, which cost more than
// the whole read.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { LATENCY } from './frame-metrics-dal.ts';
import type { ReplicaSums, RequestSums } from './metrics-points.ts';

/** What a query reads: one frame's rows of one resolution in [since, until). */
export interface SumsAsked {
  projectId: string;
  spaceId: string;
  frameId: string;
  resolution: number;
  since: Date;
  until: Date;
  step: number;
}

const USAGE = [
  'replica',
  'seconds',
  'cpu_seconds',
  'memory_max_bytes',
  'memory_limit_bytes',
  'net_rx_bytes',
  'net_tx_bytes',
  'restarts',
] as const;
const COUNTS = ['status_1xx', 'status_2xx', 'status_3xx', 'status_4xx', 'status_5xx', ...LATENCY];

/**
 * Each column of the rows as one array, as text: `{1,2,NULL}`. Formatting the values is most of
 * the statement's time, and arrays format them with the least else (json_build_array took twice
 * as long). Times as epoch seconds, from date_part (float8; extract would be numeric).
 */
const columns = (names: readonly string[], prefix: string) =>
  sql.raw(
    [`date_part('epoch', at)::int8`, ...names]
      .map((c, i) => `coalesce(array_agg(${c})::text, '{}') as ${prefix}${i}`)
      .join(', '),
  );

/** The statement, apart for a bench or a test to read its plan. */
export function frameSumsQuery(a: SumsAsked) {
  const rows = sql`frame_id = ${a.frameId} and resolution = ${a.resolution}
    and at >= ${a.since} and at < ${a.until}`;
  return sql<Record<string, string> & { found: boolean | null }>`
    select (select true from frames where id = ${a.frameId} and project_id = ${a.projectId}
        and space_id = ${a.spaceId}) as found, u.*, r.*
    from (select ${columns(USAGE, 'u')} from frame_replica_metrics where ${rows}) u,
      (select ${columns(COUNTS, 'r')} from frame_request_metrics where ${rows}) r`;
}

/** `{1,NULL,2.5}` as [1, null, 2.5]; JSON.parse reads the numbers four times as fast as a
 *  split and Number() each. */
export function numbers(text: string | undefined): Array<number | null> {
  if (!text || text === '{}') return [];
  return JSON.parse(`[${text.slice(1, -1).replaceAll('NULL', 'null')}]`);
}

/** Whether the frame is in the project and space; if so its rows of the range. */
export async function frameSums(q: Queryable, a: SumsAsked) {
  const row = (await frameSumsQuery(a).execute(q)).rows[0];
  if (!row?.found) return undefined;
  const u = USAGE.map((_, i) => numbers(row[`u${i + 1}`]));
  const r = COUNTS.map((_, i) => numbers(row[`r${i + 1}`]));
  const n = (column: Array<number | null> | undefined, k: number) => column?.[k] ?? 0;
  const usage: ReplicaSums[] = numbers(row.u0).map((at, k) => ({
    at: (at ?? 0) * 1000,
    replica: n(u[0], k),
    seconds: n(u[1], k),
    cpu_seconds: n(u[2], k),
    memory_max_bytes: u[3]?.[k] ?? null,
    memory_limit_bytes: u[4]?.[k] ?? null,
    net_rx_bytes: u[5]?.[k] ?? null,
    net_tx_bytes: u[6]?.[k] ?? null,
    restarts: n(u[7], k),
  }));
  const requests: RequestSums[] = numbers(row.r0).map((at, k) => ({
    at: (at ?? 0) * 1000,
    status: [0, 1, 2, 3, 4].map((i) => n(r[i], k)) as RequestSums['status'],
    latency: LATENCY.map((_, i) => n(r[5 + i], k)),
  }));
  return { usage, requests };
}
