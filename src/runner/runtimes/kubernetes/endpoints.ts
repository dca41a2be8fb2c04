// Where the edge reaches a frame's pods (issue 40): the pods' own addresses on the frame's
// port, as a cluster without kube-proxy still routes them (a Service's virtual address needs
// kube-proxy; the edge balances by itself). Only pods that are Ready and not going away take
// connections, in slot order. Pure.
import type { V1Pod } from '@kubernetes/client-node';
import type { Endpoint } from '../runtime.ts';
import type { Slots } from './slots.ts';

/** Ready as the kubelet says (its readiness probe passed), and not being deleted. */
export const isReady = (p: V1Pod) =>
  !p.metadata?.deletionTimestamp &&
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

export function readyEndpoints(pods: V1Pod[], slots: Slots, port: number): Endpoint[] {
  return pods
    .filter((p) => isReady(p) && !!p.status?.podIP && slots.has(p.metadata?.name ?? ''))
    .sort(
      (a, b) => (slots.get(a.metadata?.name ?? '') ?? 0) - (slots.get(b.metadata?.name ?? '') ?? 0),
    )
    .map((p) => ({ host: p.status?.podIP as string, port }));
}
