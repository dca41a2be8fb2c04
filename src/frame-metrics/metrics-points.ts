// The points of a metrics answer, from the stored rows (metrics-query-dal.ts): each row is added
// to the step it falls in (a step may hold several rows, 15 minutes of five-minute rows). Pure.
// Rates are each replica's sums over the seconds its samples covered, then summed over
// replicas; percentiles are read from the summed latency histogram.
import { LATENCY_BOUNDS_MS } from '../agent-api/sync-items.ts';
import type { Static } from 'typebox';
import type { Range } from './metrics-range.ts';
import type { MetricsPoint, ReplicaMetricsPoint } from './frame-metrics-schemas.ts';

/** One replica's sums over one stored row (or, added up, over one step). */
export interface ReplicaSums {
  replica: number;
  /** The step's start, in ms since the epoch. */
  at: number;
  seconds: number;
  cpu_seconds: number;
  memory_max_bytes: number | null;
  memory_limit_bytes: number | null;
  net_rx_bytes: number | null;
  net_tx_bytes: number | null;
  restarts: number;
}

/** The edge's sums for the frame over one stored row (or one step). */
export interface RequestSums {
  /** The step's start, in ms since the epoch. */
  at: number;
  status: [number, number, number, number, number];
  latency: number[];
}

/**
 * The latency under which a fraction `q` of the requests fell: linear inside the bucket that
 * holds that rank (the first from 0 ms); the last, open bucket answers its lower bound.
 */
export function quantile(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  let lower = 0;
  for (const [i, n] of histogram.entries()) {
    const upper = LATENCY_BOUNDS_MS[i];
    if (n > 0 && below + n >= rank)
      return upper === undefined ? lower : lower + ((upper - lower) * (rank - below)) / n;
    below += n;
    lower = upper ?? lower;
  }
  return lower; // only when rounding left the rank past the last count
}

const round = (x: number) => Math.round(x * 1000) / 1000;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const QUANTILES = [0.5, 0.95, 0.99] as const;

/** p50, p95 and p99 as `quantile` reads them, in one walk of the histogram. */
export function percentiles(histogram: readonly number[]) {
  let total = 0;
  for (const n of histogram) total += n;
  if (total === 0) return null;
  const found: number[] = [];
  let below = 0;
  let lower = 0;
  for (const [i, n] of histogram.entries()) {
    const upper = LATENCY_BOUNDS_MS[i];
    for (let q = QUANTILES[found.length]; q !== undefined && n > 0 && below + n >= q * total; ) {
      const rank = q * total;
      found.push(upper === undefined ? lower : lower + ((upper - lower) * (rank - below)) / n);
      q = QUANTILES[found.length];
    }
    below += n;
    lower = upper ?? lower;
  }
  while (found.length < QUANTILES.length) found.push(lower);
  const [p50 = lower, p95 = lower, p99 = lower] = found;
  return { p50: round(p50), p95: round(p95), p99: round(p99) };
}

const addKnown = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : a + b);
const maxKnown = (a: number | null, b: number | null) =>
  a === null ? b : b === null ? a : Math.max(a, b);

/** Sums of a step made by adding rows up (the others are a step's only row, left as read). */
const added = new WeakSet<object>();

/** Adds a row to a replica's sums of its step. */
function addUsage(sums: ReplicaSums | undefined, r: ReplicaSums): ReplicaSums {
  if (!sums) return r;
  const into = added.has(sums) ? sums : { ...sums };
  added.add(into);
  into.seconds += r.seconds;
  into.cpu_seconds += r.cpu_seconds;
  into.memory_max_bytes = maxKnown(into.memory_max_bytes, r.memory_max_bytes);
  into.memory_limit_bytes = maxKnown(into.memory_limit_bytes, r.memory_limit_bytes);
  into.net_rx_bytes = addKnown(into.net_rx_bytes, r.net_rx_bytes);
  into.net_tx_bytes = addKnown(into.net_tx_bytes, r.net_tx_bytes);
  into.restarts += r.restarts;
  return into;
}

function addRequests(sums: RequestSums | undefined, r: RequestSums): RequestSums {
  if (!sums) return r;
  const into = added.has(sums)
    ? sums
    : {
        at: sums.at,
        status: [...sums.status] as RequestSums['status'],
        latency: [...sums.latency],
      };
  added.add(into);
  r.status.forEach((n, i) => {
    into.status[i] = (into.status[i] ?? 0) + n;
  });
  r.latency.forEach((n, i) => {
    into.latency[i] = (into.latency[i] ?? 0) + n;
  });
  return into;
}

const perSecond = (bytes: number | null, seconds: number) =>
  bytes === null ? null : bytes / seconds;

/** What the replicas used in step `i`, summed over them; nulls where none said. */
function usageOf(series: Array<Array<ReplicaSums | undefined>>, i: number) {
  let cpu: number | null = null;
  let memory: number | null = null;
  let limit: number | null = null;
  let rx: number | null = null;
  let tx: number | null = null;
  let restarts = 0;
  for (const s of series) {
    const r = s[i];
    if (!r) continue;
    cpu = (cpu ?? 0) + r.cpu_seconds / r.seconds;
    memory = addKnown(memory, r.memory_max_bytes);
    limit = addKnown(limit, r.memory_limit_bytes);
    rx = addKnown(rx, perSecond(r.net_rx_bytes, r.seconds));
    tx = addKnown(tx, perSecond(r.net_tx_bytes, r.seconds));
    restarts += r.restarts;
  }
  return {
    usage: {
      cpu_cores: cpu === null ? null : round6(cpu),
      memory_bytes: memory,
      memory_limit_bytes: limit,
    },
    net_rx_bytes_per_second: rx === null ? null : round(rx),
    net_tx_bytes_per_second: tx === null ? null : round(tx),
    restarts,
  };
}

/** One replica's point: what `usageOf` answers of it alone, without its sums' arrays. */
export const replicaPoint = (at: string, r: ReplicaSums | undefined): ReplicaPoint => ({
  at,
  cpu_cores: r ? round6(r.cpu_seconds / r.seconds) : null,
  memory_bytes: r ? r.memory_max_bytes : null,
  memory_limit_bytes: r ? r.memory_limit_bytes : null,
});

/** The points as the answer's schema has them: answers are sent as their JSON text
 *  (closed-steps.ts), so these types are what holds them to the schema. */
export type ReplicaPoint = Static<typeof ReplicaMetricsPoint>;
export type FramePoint = Static<typeof MetricsPoint>;

/** One step of an answer: the frame's point and the point of each replica that said. */
export interface Step {
  point: FramePoint;
  replicas: Map<number, ReplicaPoint>;
}

function framePoint(
  at: string,
  usage: ReturnType<typeof usageOf>,
  req: RequestSums | undefined,
): FramePoint {
  const [s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0] = req?.status ?? [];
  return {
    at,
    ...usage.usage,
    net_rx_bytes_per_second: usage.net_rx_bytes_per_second,
    net_tx_bytes_per_second: usage.net_tx_bytes_per_second,
    restarts: usage.restarts,
    requests: s1 + s2 + s3 + s4 + s5,
    status: { '1xx': s1, '2xx': s2, '3xx': s3, '4xx': s4, '5xx': s5 },
    latency_ms: req ? percentiles(req.latency) : null,
  };
}

/** The steps of the range from the stored rows, oldest first; times as RFC 3339 text. */
export function buildSteps(
  range: Range,
  replicaRows: ReplicaSums[],
  requestRows: RequestSums[],
): Step[] {
  const stepMs = range.step * 1000;
  const count = (range.until.getTime() - range.since.getTime()) / stepMs;
  const since = range.since.getTime();
  const slot = (at: number) => Math.floor((at - since) / stepMs);
  const byReplica = new Map<number, Array<ReplicaSums | undefined>>();
  for (const r of replicaRows) {
    const i = slot(r.at);
    if (i < 0 || i >= count) continue;
    const own = byReplica.get(r.replica) ?? new Array<ReplicaSums | undefined>(count);
    own[i] = addUsage(own[i], r);
    byReplica.set(r.replica, own);
  }
  const requests = new Array<RequestSums | undefined>(count);
  for (const r of requestRows) {
    const i = slot(r.at);
    if (i >= 0 && i < count) requests[i] = addRequests(requests[i], r);
  }
  const series = [...byReplica.entries()];
  return Array.from({ length: count }, (_, i) => {
    const at = new Date(since + i * stepMs).toISOString();
    const replicas = new Map<number, ReplicaPoint>();
    for (const [replica, sums] of series) {
      const r = sums[i];
      if (r) replicas.set(replica, replicaPoint(at, r));
    }
    const usage = usageOf(
      series.map(([, sums]) => sums),
      i,
    );
    return { point: framePoint(at, usage, requests[i]), replicas };
  });
}

/** The replicas that said anything in the steps, in order. Runs on every answer over every
 *  step (closed-steps.ts): a plain loop, no array per step. */
export function replicasOf(steps: Array<{ replicas: Map<number, unknown> }>): number[] {
  const seen = new Set<number>();
  for (const s of steps) for (const r of s.replicas.keys()) seen.add(r);
  return [...seen].sort((a, b) => a - b);
}
