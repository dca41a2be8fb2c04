// The test cluster is what the kubernetes runtime needs, checked through the API with
// @kubernetes/client-node (as the runtime will talk to it), not kubectl: a Deployment of two
// non-root pods of the offline Node.js base image, all listening on one port, becomes Ready;
// each pod has an address of its own and answers HTTP there from the test process; a pod cannot
// connect to another pod (dockerd's --icc=false, the tenant isolation this cluster enforces),
// though it reaches the node; deleting the Deployment removes its pods and their containers.
// Everything here lives in the run's own network namespace (cluster/in-netns.sh).
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { AppsV1Api, CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dockerCall } from '../containers/docker.ts';

const kc = new KubeConfig();
kc.loadFromDefault();
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const image = inject('frameBaseImage');
const dockerHost = inject('dockerHost');

const namespace = `fp-cluster-${process.pid}`;
const PORT = 8080;
const APP = { app: 'hello' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, ms: number, get: () => Promise<T | undefined>): Promise<T> {
  let last: unknown;
  for (const end = Date.now() + ms; Date.now() < end; await sleep(250)) {
    try {
      const v = await get();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
  }
  throw new Error(`${what}: not within ${ms} ms${last ? ` (last error: ${last})` : ''}`);
}

// A non-root pod as the runtime will make them: no API credentials, no service links.
const podBase = {
  automountServiceAccountToken: false,
  enableServiceLinks: false,
  terminationGracePeriodSeconds: 1,
  securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true },
};
const container = (name: string, script: string, env: Record<string, string> = {}) => ({
  name,
  image,
  imagePullPolicy: 'Never',
  command: ['node', '-e', script],
  env: Object.entries(env).map(([n, value]) => ({ name: n, value })),
  securityContext: { allowPrivilegeEscalation: false },
});

// Answers with the pod's name (HOSTNAME) and the uid it runs as.
const HELLO = `require('http').createServer((q, s) => s.end(JSON.stringify({
  pod: process.env.HOSTNAME, uid: process.getuid() }))).listen(${PORT})`;

// Tries each of TARGETS (host:port, comma-separated) once, 3 s each, and prints one JSON line
// per target: connected, timeout, or the error code.
const PROBE = `const net = require('net');
const attempt = (t) => new Promise((done) => {
  const [host, port] = t.split(':');
  const s = net.connect({ host, port: Number(port) });
  s.setTimeout(3000, () => { s.destroy(); done('timeout'); });
  s.on('connect', () => { s.destroy(); done('connected'); });
  s.on('error', (e) => done(e.code));
});
(async () => {
  for (const t of process.env.TARGETS.split(','))
    console.log(JSON.stringify({ target: t, outcome: await attempt(t) }));
})();`;

let pods: V1Pod[] = [];
let listener: Server;

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  // The namespace's default service account comes from the controller-manager; pods wait on it.
  await until('the default service account', 30_000, async () =>
    (await core.listNamespacedServiceAccount({ namespace })).items.length ? true : undefined,
  );
  // The node's side of the control: a port of the test process, on every address of the namespace.
  listener = createServer((s) => s.destroy()).listen(0, '0.0.0.0');
  await once(listener, 'listening');
});

afterAll(async () => {
  listener?.close();
  await core.deleteNamespace({ name: namespace }).catch(() => {});
});

describe('the test cluster', () => {
  it('runs a Deployment of two non-root pods, each answering HTTP on its own address', async () => {
    const t0 = Date.now();
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: 'hello' },
        spec: {
          replicas: 2,
          selector: { matchLabels: APP },
          template: {
            metadata: { labels: APP },
            spec: {
              ...podBase,
              containers: [
                {
                  ...container('web', HELLO),
                  ports: [{ containerPort: PORT }],
                  readinessProbe: { httpGet: { path: '/', port: PORT }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
    });
    await until('2 ready replicas', 90_000, async () => {
      const d = await apps.readNamespacedDeployment({ name: 'hello', namespace });
      return d.status?.readyReplicas === 2 ? d : undefined;
    });
    console.log(`[k8s] Deployment of 2 pods ready in ${Date.now() - t0} ms`);

    pods = (await core.listNamespacedPod({ namespace, labelSelector: 'app=hello' })).items;
    expect(pods).toHaveLength(2);
    const ips = pods.map((p) => p.status?.podIP);
    expect(new Set(ips).size).toBe(2);
    for (const p of pods) {
      expect(p.status?.podIP).not.toBe(p.status?.hostIP);
      const res = await fetch(`http://${p.status?.podIP}:${PORT}/`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ pod: p.metadata?.name, uid: 1000 });
    }
  });

  it('keeps pods from connecting to each other, while a pod still reaches the node', async () => {
    const [a, b] = pods;
    const node = a?.status?.hostIP;
    const { port } = listener.address() as AddressInfo;
    const targets = [
      `${a?.status?.podIP}:${PORT}`,
      `${b?.status?.podIP}:${PORT}`,
      `${node}:${port}`,
    ];
    await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'probe' },
        spec: {
          ...podBase,
          restartPolicy: 'Never',
          containers: [container('probe', PROBE, { TARGETS: targets.join(',') })],
        },
      },
    });
    const done = await until('the probe pod to finish', 60_000, async () => {
      const p = await core.readNamespacedPod({ name: 'probe', namespace });
      return ['Succeeded', 'Failed'].includes(p.status?.phase ?? '') ? p : undefined;
    });
    const log = await core.readNamespacedPodLog({ name: 'probe', namespace });
    const outcomes = Object.fromEntries(
      log
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { target: string; outcome: string })
        .map((o) => [o.target, o.outcome]),
    );
    expect(done.status?.phase, log).toBe('Succeeded');
    expect(done.status?.podIP).not.toBe(a?.status?.podIP);
    // Dropped on the bridge: no answer at all, not even a refusal.
    expect(outcomes).toEqual({
      [targets[0] as string]: 'timeout',
      [targets[1] as string]: 'timeout',
      [targets[2] as string]: 'connected',
    });
  });

  it('removes the pods and their containers when the Deployment is deleted', async () => {
    // The Deployment's containers running in dockerd: each pod's sandbox and app.
    const filters = encodeURIComponent(
      JSON.stringify({ label: [`io.kubernetes.pod.namespace=${namespace}`] }),
    );
    const running = async () =>
      (
        await dockerCall<{ Labels: Record<string, string> }[]>(
          dockerHost,
          'GET',
          `/containers/json?filters=${filters}`,
        )
      ).filter((c) => c.Labels['io.kubernetes.pod.name']?.startsWith('hello-')).length;
    expect(await running()).toBe(4);
    const t0 = Date.now();
    await apps.deleteNamespacedDeployment({
      name: 'hello',
      namespace,
      propagationPolicy: 'Background',
    });
    await until('their containers to stop', 30_000, async () =>
      (await running()) === 0 ? true : undefined,
    );
    const t1 = Date.now();
    // The API forgets a pod once the kubelet has removed its stopped containers too: at once
    // most times, else at its next container GC (every minute, kubelet 1.20); 6 to 45 s seen.
    await until('the pods to go', 90_000, async () => {
      const left = await core.listNamespacedPod({ namespace, labelSelector: 'app=hello' });
      return left.items.length === 0 ? true : undefined;
    });
    console.log(
      `[k8s] Deployment deleted: its containers stopped in ${t1 - t0} ms,` +
        ` its pods gone from the API in ${Date.now() - t0} ms`,
    );
  });
});
