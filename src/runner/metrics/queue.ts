// The samples waiting for a sync (client.ts's Outbox holds one of these). Bounded whatever the
// outage: per replica (and per frame's requests) at most one sample waits, a later one merged
// into it (their counts add up, memory keeps the larger reading), so the queue holds one item
// per replica and frame of this agent, however long the service is away. One exception keeps
// counts exact: a sample already offered in a sync whose fate is unknown is not merged into
// (the sync may yet be taken); a later one waits beside it, and the two are merged at the next
// batch if that sync failed. An item too old to merge (more than an hour together) gives way
// to the later one.
import { mergeReplicaSamples, type ReplicaMetric } from './deltas.ts';
import { mergeRequestSamples, type RequestMetric } from '../edge/request-meter.ts';

export interface Metrics {
  replicas?: ReplicaMetric[];
  requests?: RequestMetric[];
}

class Latest<T extends object> {
  private lists = new Map<string, T[]>();
  private offered = new WeakSet<T>();

  constructor(
    private key: (t: T) => string,
    private merge: (a: T, b: T) => T | undefined,
  ) {}

  get size() {
    return this.lists.size;
  }

  push(t: T) {
    const k = this.key(t);
    const list = this.lists.get(k);
    if (!list) return void this.lists.set(k, [t]);
    const last = list.length - 1;
    if (this.offered.has(list[last] as T)) list.push(t);
    else list[last] = this.merge(list[last] as T, t) ?? t;
  }

  /** The items to offer, one per key, while `fits` says so; called with no sync in flight. */
  take(fits: (t: T) => boolean): T[] {
    const out: T[] = [];
    for (const [k, list] of this.lists) {
      const one = list.reduce((a, b) => this.merge(a, b) ?? b);
      if (list.length > 1) this.lists.set(k, [one]);
      if (!fits(one)) break;
      this.offered.add(one);
      out.push(one);
    }
    return out;
  }

  /** Removes what a sync took (by identity: a later sample may wait beside it). */
  ack(sent: readonly T[]) {
    for (const t of sent) {
      const k = this.key(t);
      const left = this.lists.get(k)?.filter((x) => x !== t) ?? [];
      if (left.length > 0) this.lists.set(k, left);
      else this.lists.delete(k);
    }
  }
}

export class MetricsQueue {
  private replicas = new Latest<ReplicaMetric>(
    (m) => `${m.frame_id}/${m.replica}`,
    mergeReplicaSamples,
  );
  private requests = new Latest<RequestMetric>((m) => m.frame_id, mergeRequestSamples);

  get size() {
    return this.replicas.size + this.requests.size;
  }

  replica(m: ReplicaMetric) {
    this.replicas.push(m);
  }

  request(m: RequestMetric) {
    this.requests.push(m);
  }

  /** The samples to send, in at most `maxBytes` of JSON (about); undefined when none. */
  take(maxBytes: number): { metrics?: Metrics; bytes: number } {
    let bytes = 0;
    const fits = (t: object) => {
      const size = Buffer.byteLength(JSON.stringify(t)) + 1;
      if (bytes + size > maxBytes) return false;
      bytes += size;
      return true;
    };
    const replicas = this.replicas.take(fits);
    const requests = this.requests.take(fits);
    if (!replicas.length && !requests.length) return { bytes: 0 };
    return {
      bytes,
      metrics: {
        ...(replicas.length ? { replicas } : {}),
        ...(requests.length ? { requests } : {}),
      },
    };
  }

  ack(m: Metrics | undefined) {
    this.replicas.ack(m?.replicas ?? []);
    this.requests.ack(m?.requests ?? []);
  }
}
