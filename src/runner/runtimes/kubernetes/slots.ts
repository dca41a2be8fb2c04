// Which replica (slot) each pod of a frame's Deployment reports as (issue 40). The agent
// reports replicas by index (0..replica_count-1); a Deployment's pods have no ordinal, and a
// pod's name says nothing of its place. The rule, pure and stable:
// - a pod that is being deleted or has ended (an eviction) holds no slot: its Deployment is
//   replacing it (the supervisor reports its end under the slot it held);
// - a pod keeps the slot it held, if below replica_count;
// - the others, oldest first (by creation time, then name), take the lowest free slot.
// So a pod never changes slot while it serves, a replacement takes the place of the pod it
// replaces, and a rollout's extra pod (maxSurge), at replica_count, moves down into the first
// slot an old pod frees: at the end of a rollout or a scale-down, slots 0..n-1 are full.
import type { V1Pod } from '@kubernetes/client-node';

/** Slot by pod name. */
export type Slots = ReadonlyMap<string, number>;

const created = (p: V1Pod) => {
  const t = p.metadata?.creationTimestamp;
  const n = t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : Number.NaN;
  return Number.isNaN(n) ? 0 : n;
};

/** Holds a slot: not being deleted, not ended. */
export const holdsSlot = (p: V1Pod) =>
  !!p.metadata?.name &&
  !p.metadata.deletionTimestamp &&
  p.status?.phase !== 'Failed' &&
  p.status?.phase !== 'Succeeded';

export function assignSlots(
  pods: V1Pod[],
  previous: Slots,
  replicaCount: number,
): Map<string, number> {
  const live = pods
    .filter(holdsSlot)
    .sort(
      (a, b) =>
        created(a) - created(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
  const slots = new Map<string, number>();
  const taken = new Set<number>();
  for (const p of live) {
    const name = p.metadata?.name as string;
    const held = previous.get(name);
    if (held === undefined || held >= replicaCount || held < 0 || taken.has(held)) continue;
    slots.set(name, held);
    taken.add(held);
  }
  let next = 0;
  for (const p of live) {
    const name = p.metadata?.name as string;
    if (slots.has(name)) continue;
    while (taken.has(next)) next++;
    slots.set(name, next);
    taken.add(next);
  }
  return slots;
}
