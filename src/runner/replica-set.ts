// The replicas of one deployment on one frame (frame-runner.ts): its release once built, one
// slot per replica index, and whether it was retired (replaced, failed or stopped), after which
// nothing of it restarts or reports.
import type { Replica } from './replica.ts';
import type { PersistedSet } from './state.ts';
import type { Endpoint, Release } from './runtimes/runtime.ts';

export interface Slot {
  index: number;
  replica?: Replica;
  attempts: number;
  /** What the replica in the slot last failed of, until one there is healthy again. */
  failed?: 'crash' | 'oom';
  timer?: NodeJS.Timeout;
  spawning?: boolean;
}

export class ReplicaSet {
  slots = new Map<number, Slot>();
  release?: Release;
  retired = false;
  readonly abort = new AbortController();
  constructor(
    readonly deploymentId: string,
    public generation: number,
    public count: number,
    readonly env: Record<string, string>,
  ) {}
  get prepared() {
    return this.release !== undefined;
  }
  slot(index: number): Slot {
    const known = this.slots.get(index);
    if (known) return known;
    const s: Slot = { index, attempts: 0 };
    this.slots.set(index, s);
    return s;
  }
  healthy(): Endpoint[] {
    return [...this.slots.values()]
      .sort((a, b) => a.index - b.index)
      .flatMap((s) => (s.index < this.count && s.replica?.healthy ? [s.replica.endpoint] : []));
  }
  /** What an adopting agent needs of it; nothing once retired or before its release is built. */
  persisted(): PersistedSet | undefined {
    if (this.retired || this.release === undefined) return undefined;
    return {
      deployment_id: this.deploymentId,
      generation: this.generation,
      release: this.release,
      replicas: [...this.slots.values()].flatMap((sl) =>
        sl.replica && !sl.replica.exited ? [{ index: sl.index, ref: sl.replica.ref() }] : [],
      ),
    };
  }
}
