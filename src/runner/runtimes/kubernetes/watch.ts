// The cluster's account of the frames' pods, kept current by watches (issue 40: status from the
// cluster's truth, never by polling logs). One pair of informers per namespace the agent's
// frames live in: the pods Frameplane manages (by label), and the Events of that namespace's
// pods (an Event names its pod, not its labels). Each change wakes the supervisor of the frame
// the pod belongs to; it then reads the caches, never the API.
//
// An informer whose watch fails (the API server restarted, a 410 Gone) is started again after
// a pause: its list then brings the cache back to the cluster's state, so nothing is missed.
import {
  type CoreV1Event,
  type Informer,
  makeInformer,
  type ObjectCache,
  type V1Pod,
} from '@kubernetes/client-node';
import type { Cluster } from './cluster.ts';
import { LABELS, MANAGED_SELECTOR } from './names.ts';

const RESTART_MS = 2000;

type Cached<T> = Informer<T & { metadata?: object }> & ObjectCache<T>;

interface Watched {
  pods: Cached<V1Pod>;
  events: Cached<CoreV1Event>;
  ready: Promise<void>;
}

export interface PodWatch {
  /** Calls `wake` whenever a pod of the frame or one of its Events changes; returns an unsubscribe. */
  subscribe(namespace: string, frameId: string, wake: () => void): () => void;
  /** The frame's pods and their Events as last seen (after the namespace's first list). */
  read(namespace: string, frameId: string): Promise<{ pods: V1Pod[]; events: CoreV1Event[] }>;
  stop(): Promise<void>;
}

export function watchPods(c: Cluster, log: (err: unknown, what: string) => void): PodWatch {
  const namespaces = new Map<string, Watched>();
  const wakers = new Map<string, Set<() => void>>();
  /** Subscriptions per namespace: its watches run while it has any. */
  const users = new Map<string, number>();
  let stopped = false;

  const wakeFrame = (frameId: string | undefined) => {
    if (frameId) for (const w of wakers.get(frameId) ?? []) w();
  };

  function keepRunning<T>(informer: Cached<T>, namespace: string, what: string) {
    // Not once its namespace's watches were ended (its last frame left), or all of them.
    const current = () => {
      const w = namespaces.get(namespace);
      const mine: unknown = informer;
      return !stopped && (w?.pods === mine || w?.events === mine);
    };
    informer.on('error', (err) => {
      if (!current()) return;
      log(err, `the watch of ${what} failed; started again in ${RESTART_MS} ms`);
      setTimeout(() => {
        if (current()) informer.start().catch((e) => log(e, `the watch of ${what}`));
      }, RESTART_MS).unref();
    });
  }

  function watched(namespace: string): Watched {
    const known = namespaces.get(namespace);
    if (known) return known;
    const pods = makeInformer<V1Pod>(
      c.config,
      `/api/v1/namespaces/${namespace}/pods`,
      () => c.core.listNamespacedPod({ namespace, labelSelector: MANAGED_SELECTOR }),
      MANAGED_SELECTOR,
    );
    const events = makeInformer<CoreV1Event>(
      c.config,
      `/api/v1/namespaces/${namespace}/events`,
      () => c.core.listNamespacedEvent({ namespace }),
    );
    const frameOfPod = (p: V1Pod) => p.metadata?.labels?.[LABELS.frame];
    for (const verb of ['add', 'update', 'delete'] as const) {
      pods.on(verb, (p) => wakeFrame(frameOfPod(p)));
      events.on(verb, (e) => {
        if (e.involvedObject?.kind !== 'Pod' || !e.involvedObject.name) return;
        const pod = pods.get(e.involvedObject.name, namespace);
        wakeFrame(pod && frameOfPod(pod));
      });
    }
    keepRunning(pods, namespace, `pods in ${namespace}`);
    keepRunning(events, namespace, `events in ${namespace}`);
    const w = { pods, events, ready: Promise.all([pods.start(), events.start()]).then(() => {}) };
    // A namespace not there yet fails its first list: it is watched again on the next read.
    w.ready.catch(() => namespaces.delete(namespace));
    namespaces.set(namespace, w);
    return w;
  }

  return {
    subscribe(namespace, frameId, wake) {
      watched(namespace);
      users.set(namespace, (users.get(namespace) ?? 0) + 1);
      const set = wakers.get(frameId) ?? new Set();
      set.add(wake);
      wakers.set(frameId, set);
      return () => {
        set.delete(wake);
        if (set.size === 0) wakers.delete(frameId);
        const left = (users.get(namespace) ?? 1) - 1;
        if (left > 0) return void users.set(namespace, left);
        // The namespace's last frame left this agent: its watches end with it.
        users.delete(namespace);
        const w = namespaces.get(namespace);
        namespaces.delete(namespace);
        if (w) void Promise.all([w.pods.stop(), w.events.stop()]).catch(() => {});
      };
    },
    async read(namespace, frameId) {
      const w = watched(namespace);
      await w.ready;
      const pods = w.pods
        .list(namespace)
        .filter((p) => p.metadata?.labels?.[LABELS.frame] === frameId);
      const names = new Set(pods.map((p) => p.metadata?.name));
      const events = w.events
        .list(namespace)
        .filter((e) => e.involvedObject?.kind === 'Pod' && names.has(e.involvedObject.name));
      return { pods, events };
    },
    async stop() {
      stopped = true;
      await Promise.all(
        [...namespaces.values()].flatMap((w) => [w.pods.stop(), w.events.stop()]),
      ).catch(() => {});
      namespaces.clear();
    },
  };
}
