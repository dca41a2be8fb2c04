// Finding what the server refuses in a report (issue 34). The agent checks each item before
// queueing it (sync-check.ts), yet a newer server may refuse more, or accept smaller bodies.
// Then the report is sent again in parts: one per frame, then halves of one frame's items,
// until each refused item stands alone. Parts keep the report's order (build reports, events,
// log lines; metrics samples between events and lines), so a frame's items still reach the
// server in the order they happened.
import type { BuildReport, SyncEvent, SyncLog } from './protocol.ts';
import type { ReplicaMetric } from './metrics/deltas.ts';
import type { RequestMetric } from './edge/request-meter.ts';
import type { Metrics } from './metrics/queue.ts';

export interface Batch {
  events: SyncEvent[];
  logs: SyncLog[];
  builds?: BuildReport[];
  metrics?: Metrics;
}

export type Item =
  | { kind: 'build'; value: BuildReport }
  | { kind: 'event'; value: SyncEvent }
  | { kind: 'replica_metric'; value: ReplicaMetric }
  | { kind: 'request_metric'; value: RequestMetric }
  | { kind: 'log'; value: SyncLog };

export const isEmpty = (b: Batch) =>
  !b.events.length &&
  !b.logs.length &&
  !b.builds?.length &&
  !b.metrics?.replicas?.length &&
  !b.metrics?.requests?.length;

/** The items of a batch in the order the server applies them. */
export function itemsOf(b: Batch): Item[] {
  return [
    ...(b.builds ?? []).map((value) => ({ kind: 'build' as const, value })),
    ...b.events.map((value) => ({ kind: 'event' as const, value })),
    ...(b.metrics?.replicas ?? []).map((value) => ({ kind: 'replica_metric' as const, value })),
    ...(b.metrics?.requests ?? []).map((value) => ({ kind: 'request_metric' as const, value })),
    ...b.logs.map((value) => ({ kind: 'log' as const, value })),
  ];
}

function batchOf(items: Item[]): Batch {
  const builds: BuildReport[] = [];
  const replicas: ReplicaMetric[] = [];
  const requests: RequestMetric[] = [];
  const out: Batch = { events: [], logs: [] };
  for (const i of items) {
    if (i.kind === 'build') builds.push(i.value);
    else if (i.kind === 'event') out.events.push(i.value);
    else if (i.kind === 'replica_metric') replicas.push(i.value);
    else if (i.kind === 'request_metric') requests.push(i.value);
    else out.logs.push(i.value);
  }
  if (replicas.length || requests.length)
    out.metrics = {
      ...(replicas.length ? { replicas } : {}),
      ...(requests.length ? { requests } : {}),
    };
  return builds.length ? { builds, ...out } : out;
}

/** The frame an item is of; a build report names only its deployment, which stands for it. */
const groupOf = (i: Item) =>
  i.kind === 'build' ? `deployment ${i.value.deployment_id}` : `frame ${i.value.frame_id}`;

/** The parts to send in place of a refused batch, in order; none when it is a single item. */
export function splitBatch(b: Batch): Batch[] {
  const items = itemsOf(b);
  if (items.length <= 1) return [];
  const groups = new Map<string, Item[]>();
  for (const i of items) {
    const key = groupOf(i);
    const group = groups.get(key);
    if (group) group.push(i);
    else groups.set(key, [i]);
  }
  if (groups.size > 1) return [...groups.values()].map(batchOf);
  const half = Math.ceil(items.length / 2);
  return [batchOf(items.slice(0, half)), batchOf(items.slice(half))];
}
