// The kubernetes runtime end to end, on the real one-node cluster of the global setup: the
// service in process, the agent as a child process with --runtime kubernetes, frames built from
// git by the cluster's Docker Engine and run as Deployments in the project's namespace. Frames
// are reached through the agent's edge at their hostnames, which routes to the pods' own
// addresses (no kube-proxy here). Everything runs inside the network namespace the test run
// made (cluster/in-netns.sh), so the pods' addresses are this run's own.
import { describe, expect, it } from 'vitest';
import { framePath, newFrame } from '../helpers/frames.ts';
import { LABELS, objectName } from '../../src/runner/runtimes/kubernetes/names.ts';
import { until } from '../runner/fixture.ts';
import { answers, app, cluster, kubeWorld, objectsOf, podStates } from './kube-world.ts';

const { t: service, repo: fixture, context, world } = kubeWorld();

describe('the kubernetes runtime', () => {
  it('runs a frame from git as a Deployment, scales it, releases a config, stops, starts, deletes', {
    timeout: 600_000,
  }, async () => {
    const t = service();
    const repo = fixture();
    repo.pushFiles(app('v1'), 'v1');
    const { ann, project, space, agentId, online, get } = await world();
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: agentId,
      port: 8080,
      replica_count: 1,
      git_repository: 'app',
      git_repository_owner: 'acme',
    });
    const path = framePath(frame);
    const namespace = objectName(project.id);
    await online(path, (f) => f.latest_deployment?.status === 'succeeded');

    // One Deployment in the project's namespace, confined as the docker runtime's containers.
    const d = await cluster.apps.readNamespacedDeployment({
      namespace,
      name: objectName(frame.id),
    });
    expect(d.spec?.strategy?.rollingUpdate?.maxUnavailable).toBe(0);
    const pod = d.spec?.template.spec;
    expect(pod?.automountServiceAccountToken).toBe(false);
    expect(pod?.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod?.containers[0]?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod?.containers[0]?.resources?.limits).toMatchObject({ memory: '128Mi' });
    expect(d.metadata?.labels?.[LABELS.deployment]).toBe(
      (await t.get(path, { token: ann.token })).json.latest_deployment.id,
    );
    const [first] = await answers(() => get(frame), 1);
    expect(first).toMatch(/^200 hello v1 - from fp-/);
    // The pod's output, streamed from the API into the frame's log.
    await until(
      "the app's line in the frame's log",
      async () =>
        (await t.get(`${path}/logs?limit=200`, { token: ann.token })).json.data.some(
          (l: { line: string }) => l.line === 'app v1 up',
        ),
      30_000,
      context,
    );

    // The pod's usage, from the kubelet's Summary, in the frame's metrics.
    const used = await until(
      "the pod's CPU and memory in the frame's metrics",
      async () => {
        const m = await t.get(`${path}/metrics`, { token: ann.token });
        expect(m.status, m.text).toBe(200);
        return m.json.points.find((p: any) => p.memory_bytes > 0 && p.cpu_cores !== null);
      },
      60_000,
      context,
    );
    expect(used.memory_limit_bytes).toBe(128 * 1024 * 1024);

    // Scale 1 → 3: three pods, each answering through the edge; then back to 1.
    const scale = (n: number) =>
      t.patch(path, { token: ann.token, body: { replica_count: n } }).then((r) => {
        expect(r.status, r.text).toBe(200);
      });
    await scale(3);
    await online(path, (f) => f.replicas.filter((r: any) => r.state === 'healthy').length === 3);
    const three = await until(
      'three pods answering',
      async () => {
        const seen = new Set((await answers(() => get(frame), 12)).map((b) => b.split(' ').at(-1)));
        return seen.size === 3 ? seen : undefined;
      },
      60_000,
      context,
    );
    expect(three.size).toBe(3);
    await scale(1);
    await until(
      'one pod left',
      async () => (await objectsOf(namespace, frame.id)).pods.length === 1,
      60_000,
      context,
    );

    // A config release: the serving build with the new env, nothing built; served by a new pod.
    const env = await t.put(`${path}/env?deploy=true`, {
      token: ann.token,
      body: { vars: { GREETING: 'hi' } },
    });
    expect(env.status, env.text).toBe(200);
    await online(path, (f) => f.serving?.deployment_id === env.json.deployment.id);
    await until(
      'the new env served',
      async () => (await answers(() => get(frame), 1))[0]?.startsWith('200 hello v1 hi'),
      60_000,
      context,
    );

    // Stop: no pod left, the edge says so; start: served again.
    expect((await t.post(`${path}/stop`, { token: ann.token })).status).toBe(202);
    await until(
      'no pods',
      async () => (await objectsOf(namespace, frame.id)).pods.length === 0,
      60_000,
      context,
    );
    expect((await answers(() => get(frame), 1))[0]).toMatch(/^503/);
    expect((await t.post(`${path}/start`, { token: ann.token })).status).toBe(202);
    await online(path);
    await until(
      'served after the start',
      async () => (await answers(() => get(frame), 1))[0]?.startsWith('200 hello v1 hi'),
      60_000,
      context,
    );

    // Delete: nothing of the frame is left in the cluster, nor its project's namespace.
    expect((await t.del(path, { token: ann.token })).status).toBe(200);
    const empty = { deployments: [], replicaSets: [], pods: [], secrets: [] };
    await until(
      'nothing left',
      async () => JSON.stringify(await objectsOf(namespace, frame.id)) === JSON.stringify(empty),
      120_000,
      context,
    );
    await until(
      'the namespace gone',
      async () =>
        !(await cluster.core.listNamespace()).items.some((n) => n.metadata?.name === namespace),
      120_000,
      context,
    );
  });
  it('keeps the old release serving through a failed rollout, reports oom, trips the back-off', {
    timeout: 600_000,
  }, async () => {
    const t = service();
    const repo = fixture();
    const { ann, project, space, agentId, online, get } = await world();
    const frameOf = async (branch: string) => {
      const f = await newFrame(t, ann, project.id, space, {
        agent_id: agentId,
        port: 8080,
        git_repository: 'app',
        git_repository_owner: 'acme',
        git_repository_branch: branch,
      });
      return { frame: f, path: framePath(f) };
    };
    const eventsOf = async (path: string) =>
      (await t.get(`${path}/events?limit=200`, { token: ann.token })).json.data as any[];

    // A crash loop, started first: the kubelet's back-off spaces its crashes out.
    repo.pushFiles(
      { ...app('x'), 's.js': `console.log('crashing on purpose'); process.exit(4);` },
      'crashing',
      'crashing',
    );
    const crashing = await frameOf('crashing');
    // Past its memory limit, outside the V8 heap.
    repo.pushFiles(
      {
        ...app('x'),
        's.js': `const hog = []; setInterval(() => hog.push(Buffer.alloc(16 << 20, 1)), 50);`,
      },
      'hungry',
      'hungry',
    );
    const hungry = await frameOf('hungry');

    // v1 serves; v2 crashes at boot: its deployment fails and v1 never stops answering.
    repo.pushFiles(app('v1'), 'v1', 'steady');
    const steady = await frameOf('steady');
    await online(steady.path, (f) => f.latest_deployment?.status === 'succeeded');
    let answered = 0;
    let missed = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const r = await get(steady.frame);
        if ('body' in r && r.status === 200 && r.body.startsWith('hello v1')) answered++;
        else missed++;
        await new Promise((r) => setTimeout(r, 200)); // the watcher's pace, not a wait
      }
    })();
    repo.pushFiles(
      { ...app('v2'), 's.js': `console.log('v2 failing on purpose'); process.exit(1);` },
      'crash at boot',
      'steady',
    );
    const bad = await t.post(`${steady.path}/deploy`, { token: ann.token, body: {} });
    expect(bad.status).toBe(202);
    const failed = await online(
      steady.path,
      (f) => f.latest_deployment?.id === bad.json.id && f.latest_deployment.status === 'failed',
    );
    expect(failed.desired_state).toBe('running');
    const namespace = objectName(project.id);
    const back = await until(
      'the Deployment back on v1',
      async () => {
        const d = await cluster.apps.readNamespacedDeployment({
          namespace,
          name: objectName(steady.frame.id),
        });
        const on = d.spec?.template.metadata?.labels?.[LABELS.deployment];
        return on === failed.serving?.deployment_id && d.status?.updatedReplicas === 1
          ? d
          : undefined;
      },
      120_000,
      context,
    );
    expect(back.metadata?.labels?.[LABELS.deployment]).toBe(failed.serving.deployment_id);
    watching = false;
    await watch;
    expect(answered).toBeGreaterThan(10);
    expect(missed).toBe(0);

    const oom = await until(
      'an oom event',
      async () =>
        (await eventsOf(hungry.path)).find(
          (e) => e.type === 'replica' && e.detail?.state === 'oom',
        ),
      180_000,
      context,
    );
    expect(oom.detail.state).toBe('oom');

    const tripped = await until(
      'the back-off tripped',
      async () => {
        const f = (await t.get(crashing.path, { token: ann.token })).json;
        return f.status_reason === 'backoff_tripped' ? f : undefined;
      },
      400_000,
      context,
    );
    expect(tripped.backoff.crash_streak).toBeGreaterThanOrEqual(5);
    // A deleted pod is listed until the kubelet's housekeeping (once a minute in 1.20) is done.
    await until(
      'no pod of the crash loop left',
      async () => (await objectsOf(namespace, crashing.frame.id)).pods.length === 0,
      150_000,
      context,
    ).catch(async (err) => {
      const pods = JSON.stringify(await podStates(namespace, crashing.frame.id));
      throw new Error(`${(err as Error).message}\npods: ${pods}`);
    });
  });
});
