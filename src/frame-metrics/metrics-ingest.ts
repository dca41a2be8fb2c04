// Stores the metrics of an agent's sync (issue 39): its samples are added up per replica (and
// per frame) first, since one upsert cannot touch a row twice, then added to the rows of the
// minute, the five minutes and the hour the service's clock is in. One statement per table,
// whatever the frames.
import type { Static } from 'typebox';
import type { SyncReplicaMetricItem, SyncRequestMetricItem } from '../agent-api/sync-items.ts';
import type { Queryable } from '../db/database.ts';
import { addReplicaMetrics, addRequestMetrics } from './frame-metrics-dal.ts';
import type { ReplicaRow, RequestRow } from './frame-metrics-dal.ts';
import { bucketStart, RESOLUTIONS } from './metrics-range.ts';

/** A replica's sample as the sync carries it. */
export type ReplicaSample = Static<typeof SyncReplicaMetricItem>;
/** The edge's sample of a frame as the sync carries it. */
export type RequestSample = Static<typeof SyncRequestMetricItem>;

export interface MetricsReport {
  replicas?: ReplicaSample[];
  requests?: RequestSample[];
}

const max = (a: number | null, b: number | undefined) =>
  b === undefined ? a : a === null ? b : Math.max(a, b);
const add = (a: number | null, b: number | undefined) => (b === undefined ? a : (a ?? 0) + b);

/** The samples added up per frame and replica. */
export function replicaRows(samples: ReplicaSample[]): ReplicaRow[] {
  const rows = new Map<string, ReplicaRow>();
  for (const s of samples) {
    const key = `${s.frame_id}\u0000${s.replica}`;
    const r = rows.get(key);
    if (!r) {
      rows.set(key, {
        frame_id: s.frame_id,
        replica: s.replica,
        samples: 1,
        seconds: s.seconds,
        cpu_seconds: s.cpu_seconds,
        memory_max_bytes: s.memory_bytes ?? null,
        memory_limit_bytes: s.memory_limit_bytes ?? null,
        net_rx_bytes: s.net_rx_bytes ?? null,
        net_tx_bytes: s.net_tx_bytes ?? null,
        restarts: s.restarts ?? 0,
      });
      continue;
    }
    r.samples += 1;
    r.seconds += s.seconds;
    r.cpu_seconds += s.cpu_seconds;
    r.memory_max_bytes = max(r.memory_max_bytes, s.memory_bytes);
    r.memory_limit_bytes = max(r.memory_limit_bytes, s.memory_limit_bytes);
    r.net_rx_bytes = add(r.net_rx_bytes, s.net_rx_bytes);
    r.net_tx_bytes = add(r.net_tx_bytes, s.net_tx_bytes);
    r.restarts += s.restarts ?? 0;
  }
  return [...rows.values()];
}

const CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** The samples added up per frame. */
export function requestRows(samples: RequestSample[]): RequestRow[] {
  const rows = new Map<string, RequestRow>();
  for (const s of samples) {
    const r = rows.get(s.frame_id);
    const status = CLASSES.map((c) => s.status[c]) as RequestRow['status'];
    if (!r) {
      rows.set(s.frame_id, {
        frame_id: s.frame_id,
        samples: 1,
        seconds: s.seconds,
        status,
        latency: [...s.latency],
      });
      continue;
    }
    r.samples += 1;
    r.seconds += s.seconds;
    status.forEach((n, i) => {
      r.status[i] = (r.status[i] ?? 0) + n;
    });
    s.latency.forEach((n, i) => {
      r.latency[i] = (r.latency[i] ?? 0) + n;
    });
  }
  return [...rows.values()];
}

/** Stores a sync's metrics for the agent's own frames, in the sync's transaction. */
export async function storeMetrics(
  q: Queryable,
  agentId: string,
  report: MetricsReport | undefined,
  now: Date,
) {
  if (!report) return;
  const buckets = RESOLUTIONS.map((resolution) => ({
    resolution,
    at: bucketStart(now, resolution),
  }));
  await addReplicaMetrics(q, agentId, replicaRows(report.replicas ?? []), buckets);
  await addRequestMetrics(q, agentId, requestRows(report.requests ?? []), buckets);
}
