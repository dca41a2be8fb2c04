// What the kubernetes runtime's end-to-end tests share: the service in process (registered
// here as the file's beforeAll and afterAll), a git fixture, tenants with a self-hosted agent
// on the test cluster (agent-world.ts), and what the cluster says of a frame's objects.
import { afterAll, beforeAll } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testApp, type TestApp } from '../helpers/app.ts';
import { connect } from '../../src/runner/runtimes/kubernetes/cluster.ts';
import { LABELS } from '../../src/runner/runtimes/kubernetes/names.ts';
import { gitFixture, type hitFrame } from '../runner/fixture.ts';
import { agentWorlds } from '../runner/agent-world.ts';

export const cluster = connect();

/** A node app that says its version, its GREETING and its pod's name. */
export const app = (version: string) => ({
  'package.json': JSON.stringify({ name: 'demo', private: true, scripts: { start: 'node s.js' } }),
  's.js': `require('http').createServer((q, s) => s.end('hello ${version} ' +
    (process.env.GREETING || '-') + ' from ' + require('os').hostname()))
    .listen(Number(process.env.PORT), () => console.log('app ${version} up'));`,
});

/** Registers the file's service and agents; what the tests get from them. */
export function kubeWorld() {
  let t: TestApp;
  let tmp: string;
  let repo: ReturnType<typeof gitFixture>;
  const worlds = agentWorlds({
    t: () => t,
    runtime: 'kubernetes',
    dataDir: () => tmp,
    gitBaseUrl: () => repo.gitBaseUrl,
  });
  beforeAll(async () => {
    t = await testApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    tmp = mkdtempSync(join(tmpdir(), 'frameplane-kube-e2e-'));
    repo = gitFixture(tmp);
  });
  afterAll(async () => {
    await worlds.stop();
    await t?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });
  return {
    t: () => t,
    repo: () => repo,
    context: worlds.context,
    /** Images exist on the node whose Engine built them (the test cluster's only node) unless
     *  `env` names a registry. Metrics are sampled every 2 s, so that a test sees some soon. */
    world: (env: Record<string, string> = {}) =>
      worlds.world({ KUBERNETES_NODE: 'localhost', METRICS_INTERVAL_SECONDS: '2', ...env }),
  };
}

const frameQuery = (namespace: string, frameId: string) => ({
  namespace,
  labelSelector: `${LABELS.frame}=${frameId}`,
});

/** The frame's objects of each kind the runtime makes, by name. */
export async function objectsOf(namespace: string, frameId: string) {
  const q = frameQuery(namespace, frameId);
  const names = (l: { items: Array<{ metadata?: { name?: string } }> }) =>
    l.items.map((i) => i.metadata?.name ?? '');
  return {
    deployments: names(await cluster.apps.listNamespacedDeployment(q)),
    replicaSets: names(await cluster.apps.listNamespacedReplicaSet(q)),
    pods: names(await cluster.core.listNamespacedPod(q)),
    secrets: names(await cluster.core.listNamespacedSecret(q)),
  };
}

/** What the cluster says of the frame's pods, for a failure's message. */
export async function podStates(namespace: string, frameId: string) {
  return (await cluster.core.listNamespacedPod(frameQuery(namespace, frameId))).items.map((p) => ({
    name: p.metadata?.name,
    deleting: p.metadata?.deletionTimestamp ?? null,
    phase: p.status?.phase,
    state: p.status?.containerStatuses?.[0]?.state,
  }));
}

/** The bodies of `n` requests through the edge (or the error of each that failed). */
export async function answers(get: () => ReturnType<typeof hitFrame>, n: number) {
  const bodies: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await get();
    bodies.push('body' in r ? `${r.status} ${r.body}` : `error ${JSON.stringify(r)}`);
  }
  return bodies;
}
