// From what runtimes count (counters since a replica started, gauges now) to what the sync
// carries (SyncReplicaMetricItem): per replica, what it used since the agent's last sample of
// it. Pure, but for the memory of the last readings it holds.
//
// A replica is one index of a frame; it may run as two instances for a while (a deployment's
// new replica beside the old one, a swarm start-first update): their uses add up. Each
// instance's counters are taken apart from the others', against its own last reading. An
// instance first seen on the agent's first look at its frame (adopted, or the agent just
// started) only primes its counters: they count from a start before the interval. One that
// appeared since the frame's last look started within the interval: its counters count from
// zero, so a replica that restarts between two samples is counted whole, and its restarts
// with it. A counter that went back (a reset) counts as zero for that interval.
import type { Static } from 'typebox';
import type { SyncReplicaMetricItem } from '../../agent-api/sync-items.ts';
import type { Usage } from '../runtimes/runtime.ts';

export type ReplicaMetric = Static<typeof SyncReplicaMetricItem>;

/** An instance of a replica running now, with what its runtime read of it this time. */
export interface Reading {
  index: number;
  /** The instance's own id (a container's, a process's): its counters are its own. */
  id: string;
  /** Undefined: not read this time (gone, or the runtime slow); its last reading is kept. */
  usage: Usage | undefined;
}

interface Prior {
  at: number;
  /** Undefined: listed before, never read yet; its first reading only primes. */
  cpu?: number;
  rx?: number;
  tx?: number;
}

/** The longest interval one sample may cover (the item's bound): longer only primes again. */
export const MAX_SAMPLE_SECONDS = 3600;

const delta = (now: number | undefined, before: number | undefined) =>
  now === undefined ? undefined : Math.max(0, now - (before ?? 0));

export class ReplicaDeltas {
  /** Per frame: when it was last looked at, and its instances' last readings. */
  private frames = new Map<string, { at: number; priors: Map<string, Prior> }>();
  /** Per frame and index, the supervisor's restart count already sent. */
  private restartsSent = new Map<string, number>();

  /**
   * The items of one look at a frame at `at` (ms, monotonic): its instances now, and the
   * restarts its supervisor made so far per index (a running count).
   */
  sample(
    frameId: string,
    readings: readonly Reading[],
    restarts: ReadonlyMap<number, number>,
    at: number,
  ): ReplicaMetric[] {
    const frame = this.frames.get(frameId);
    const before = frame?.priors ?? new Map<string, Prior>();
    const priors = new Map<string, Prior>();
    const byIndex = new Map<number, ReplicaMetric>();
    for (const r of readings) {
      const last = before.get(r.id);
      const u = r.usage;
      if (!u || u.cpuSeconds === undefined) {
        // Read again next time, against the same reading.
        priors.set(r.id, last ?? { at });
        continue;
      }
      priors.set(r.id, { at, cpu: u.cpuSeconds, rx: u.netRxBytes, tx: u.netTxBytes });
      // New since the frame's last look: it started within the interval, from zero.
      const from = last ?? (frame ? { at: frame.at, cpu: 0, rx: 0, tx: 0 } : undefined);
      const seconds = (at - (from?.at ?? at)) / 1000;
      if (from?.cpu === undefined || seconds <= 0 || seconds > MAX_SAMPLE_SECONDS) continue;
      const item: ReplicaMetric = {
        frame_id: frameId,
        replica: r.index,
        seconds,
        cpu_seconds: delta(u.cpuSeconds, from.cpu) ?? 0,
        ...optional('memory_bytes', u.memoryBytes),
        ...optional('memory_limit_bytes', u.memoryLimitBytes),
        ...optional('net_rx_bytes', delta(u.netRxBytes, from.rx)),
        ...optional('net_tx_bytes', delta(u.netTxBytes, from.tx)),
      };
      const held = byIndex.get(r.index);
      byIndex.set(r.index, held ? addInstances(held, item) : item);
    }
    this.frames.set(frameId, { at, priors });
    for (const item of byIndex.values()) {
      const key = `${frameId}/${item.replica}`;
      const made = restarts.get(item.replica) ?? 0;
      const sent = this.restartsSent.get(key) ?? 0;
      // A count lower than sent: the supervisor began again (a frame back on this agent).
      item.restarts = made >= sent ? made - sent : made;
      this.restartsSent.set(key, made);
    }
    return [...byIndex.values()].sort((a, b) => a.replica - b.replica);
  }

  /** Forgets the frames not named (gone from this agent). */
  keep(frameIds: ReadonlySet<string>) {
    for (const id of this.frames.keys()) if (!frameIds.has(id)) this.frames.delete(id);
    for (const key of this.restartsSent.keys())
      if (!frameIds.has(key.slice(0, key.lastIndexOf('/')))) this.restartsSent.delete(key);
  }
}

const sum = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : a + b;

/** Two instances of one replica over the same interval: what they used together. */
function addInstances(a: ReplicaMetric, b: ReplicaMetric): ReplicaMetric {
  return {
    ...a,
    seconds: Math.max(a.seconds, b.seconds),
    cpu_seconds: a.cpu_seconds + b.cpu_seconds,
    ...optional('memory_bytes', sum(a.memory_bytes, b.memory_bytes)),
    ...optional('memory_limit_bytes', sum(a.memory_limit_bytes, b.memory_limit_bytes)),
    ...optional('net_rx_bytes', sum(a.net_rx_bytes, b.net_rx_bytes)),
    ...optional('net_tx_bytes', sum(a.net_tx_bytes, b.net_tx_bytes)),
  };
}

/** Two samples of one replica, one after the other (a sync that waited): one covering both.
 *  Memory is the larger reading, the limit the later one; undefined when they would cover
 *  more than an item may (the later one alone is kept then). */
export function mergeReplicaSamples(a: ReplicaMetric, b: ReplicaMetric): ReplicaMetric | undefined {
  const seconds = a.seconds + b.seconds;
  if (seconds > MAX_SAMPLE_SECONDS) return undefined;
  const max = (x?: number, y?: number) =>
    x === undefined ? y : y === undefined ? x : Math.max(x, y);
  return {
    frame_id: b.frame_id,
    replica: b.replica,
    seconds,
    cpu_seconds: a.cpu_seconds + b.cpu_seconds,
    ...optional('memory_bytes', max(a.memory_bytes, b.memory_bytes)),
    ...optional('memory_limit_bytes', b.memory_limit_bytes ?? a.memory_limit_bytes),
    ...optional('net_rx_bytes', sum(a.net_rx_bytes, b.net_rx_bytes)),
    ...optional('net_tx_bytes', sum(a.net_tx_bytes, b.net_tx_bytes)),
    ...optional('restarts', sum(a.restarts, b.restarts)),
  };
}

export const optional = <K extends string>(k: K, v: number | undefined) =>
  (v === undefined ? {} : { [k]: v }) as Partial<Record<K, number>>;
