// What a frame's pods use, for the metrics (issue 6's samples on the kubernetes runtime): the
// kubelet's Summary API (`/stats/summary`, read through the API server's node proxy: the agent
// needs `get` on `nodes/proxy`). One answer holds every pod of its node, so the sampler's
// questions about one node, asked together, share one request; nothing is kept after it.
import type { V1Pod } from '@kubernetes/client-node';
import type { Usage } from '../runtime.ts';
import type { Cluster } from './cluster.ts';
import { CONTAINER } from './names.ts';

/** The fields of the kubelet's Summary (stats/v1alpha1) a Usage is made of. */
export interface NodeSummary {
  pods?: Array<{
    podRef?: { name?: string; namespace?: string; uid?: string };
    containers?: Array<{
      name?: string;
      cpu?: { usageCoreNanoSeconds?: number };
      memory?: { workingSetBytes?: number; usageBytes?: number };
    }>;
    network?: { rxBytes?: number; txBytes?: number };
  }>;
}

export interface PodRef {
  node: string;
  namespace: string;
  name: string;
  uid: string;
}

const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;

/**
 * The app container's usage in a node's Summary: CPU, the working set (memory as `kubectl top`
 * and the OOM killer count it), the pod's network. Undefined when the pod is not there, is
 * another pod of that name (its uid), or the kubelet has no CPU reading of it yet.
 */
export function usageOfSummary(s: NodeSummary, pod: PodRef, memoryLimitBytes: number) {
  const p = s.pods?.find(
    (x) => x.podRef?.namespace === pod.namespace && x.podRef?.name === pod.name,
  );
  if (!p || (p.podRef?.uid && p.podRef.uid !== pod.uid)) return undefined;
  const c = p.containers?.find((x) => x.name === CONTAINER);
  const cpuNs = c?.cpu?.usageCoreNanoSeconds;
  if (!finite(cpuNs)) return undefined;
  const usage: Usage = { cpuSeconds: cpuNs / 1e9, memoryLimitBytes };
  const memory = c?.memory?.workingSetBytes ?? c?.memory?.usageBytes;
  if (finite(memory)) usage.memoryBytes = memory;
  if (finite(p.network?.rxBytes)) usage.netRxBytes = p.network.rxBytes;
  if (finite(p.network?.txBytes)) usage.netTxBytes = p.network.txBytes;
  return usage;
}

/** A running pod's place, or undefined while it is not running on a node. */
export function podRefOf(pod: V1Pod): PodRef | undefined {
  const { name, namespace, uid, deletionTimestamp } = pod.metadata ?? {};
  const node = pod.spec?.nodeName;
  if (!name || !namespace || !uid || !node || deletionTimestamp) return undefined;
  return pod.status?.phase === 'Running' ? { node, namespace, name, uid } : undefined;
}

export interface PodUsage {
  /** What the pod used so far; undefined when unknown. Never throws. */
  usage(pod: PodRef, memoryLimitBytes: number): Promise<Usage | undefined>;
}

export function podUsage(c: Cluster, log: (err: unknown, what: string) => void): PodUsage {
  const asking = new Map<string, Promise<NodeSummary | undefined>>();
  const warned = new Set<string>();

  async function summary(node: string): Promise<NodeSummary | undefined> {
    try {
      const answer: unknown = await c.core.connectGetNodeProxyWithPath({
        name: node,
        path: 'stats/summary',
      });
      // The client parses a JSON answer although its type says string.
      return (typeof answer === 'string' ? JSON.parse(answer) : answer) as NodeSummary;
    } catch (err) {
      // Said once per node (no rights on nodes/proxy, or a kubelet without the Summary API).
      if (!warned.has(node)) log(err, `the usage of the pods on node ${node}`);
      warned.add(node);
      return undefined;
    }
  }

  return {
    async usage(pod, memoryLimitBytes) {
      let answer = asking.get(pod.node);
      if (!answer) {
        answer = summary(pod.node).finally(() => asking.delete(pod.node));
        asking.set(pod.node, answer);
      }
      const s = await answer;
      return s && usageOfSummary(s, pod, memoryLimitBytes);
    },
  };
}
