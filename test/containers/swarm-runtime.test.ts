// The swarm runtime end to end: the agent as a child process with --runtime swarm on
// a real single-node Docker Swarm. A frame of two replicas is a service of two tasks, confined
// and rolled out as documented; killing one task's container leaves the other serving while
// swarm replaces it, and the frame comes back Online; a broken build keeps the service as it was,
// and so does a release that crashes at boot (CONTRACT 5), until one that works takes over.
// Frames are reached through the agent's edge at their hostnames, which routes to the tasks'
// published ports. An image that asks for a read-only root gets one, with /tmp and its volume
// writable, and a volume added reaches the app without a deploy.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testApp, type TestApp } from '../helpers/app.ts';
import { framePath, newFrame } from '../helpers/frames.ts';
import { dockerClient } from '../../src/runner/runtimes/docker.ts';
import { serviceName } from '../../src/runner/runtimes/swarm/service.ts';
import { gitFixture, readOnlyRootApp, until } from '../runner/fixture.ts';
import { agentWorlds } from '../runner/agent-world.ts';
import { startRegistry } from './registry.ts';

const docker = dockerClient();
let t: TestApp;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let registry: Awaited<ReturnType<typeof startRegistry>> | undefined;
const worlds = agentWorlds({
  t: () => t,
  runtime: 'swarm',
  dataDir: () => tmp,
  gitBaseUrl: () => repo.gitBaseUrl,
});
const { context, world } = worlds;

const app = (version: string) => ({
  'package.json': JSON.stringify({
    name: 'demo',
    private: true,
    scripts: { start: 'node server.js' },
  }),
  'server.js': `require('http').createServer((q, s) => s.end('hello ${version} from ' + require('os').hostname()))
    .listen(Number(process.env.PORT), () => console.log('app ${version} up'));`,
});

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-swarm-e2e-'));
  repo = gitFixture(tmp);
});

afterAll(async () => {
  await worlds.stop();
  await registry?.stop();
  const left = await docker.listServices({
    filters: JSON.stringify({ label: ['frameplane.frame'] }),
  });
  await Promise.all(
    left.map((s) =>
      docker
        .getService(s.ID)
        .remove()
        .catch(() => {}),
    ),
  );
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the swarm runtime', () => {
  it('runs two replicas as a service, outlives a killed task, a broken build, a crashing release', {
    timeout: 300_000,
  }, async () => {
    repo.pushFiles(app('v1'), 'v1');
    const { ann, project, space, agentId, online: onlineAt, get } = await world();
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: agentId,
      port: 8080,
      replica_count: 2,
      git_repository: 'app',
      git_repository_owner: 'acme',
    });
    const path = framePath(frame);
    const online = (test?: (f: any) => boolean) => onlineAt(path, test);
    await online((f) => f.latest_deployment?.status === 'succeeded');

    // One service of two tasks, confined and rolled out as documented.
    const [svc] = await docker.listServices({
      filters: JSON.stringify({ name: [serviceName(frame.id)] }),
    });
    const spec = svc!.Spec as any;
    expect(spec.Mode.Replicated.Replicas).toBe(2);
    expect(spec.UpdateConfig).toMatchObject({ FailureAction: 'rollback', Order: 'start-first' });
    expect(spec.TaskTemplate.ContainerSpec).toMatchObject({
      User: '1000:1000',
      CapabilityDrop: ['ALL'],
    });
    expect(spec.TaskTemplate.Resources.Limits.MemoryBytes).toBe(128 * 1024 * 1024);
    // No registry: the image exists on this node only, so the tasks are kept here.
    expect(spec.TaskTemplate.Placement.Constraints).toEqual([expect.stringMatching(/^node\.id==/)]);
    const bodies = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const r = await get(frame);
      if ('body' in r) bodies.add(r.body);
    }
    expect(bodies.size).toBe(2);

    // Kill one task's container: the other keeps serving; swarm replaces it; the frame is Online again.
    const running = await docker.listContainers({
      filters: JSON.stringify({ label: [`frameplane.frame=${frame.id}`], status: ['running'] }),
    });
    expect(running).toHaveLength(2);
    await docker.getContainer(running[0]!.Id).kill();
    let served = 0;
    for (let i = 0; i < 20; i++) {
      const r = await get(frame);
      if ('body' in r && r.status === 200) served++;
      await new Promise((r) => setTimeout(r, 100)); // the sampling pace, not a wait
    }
    expect(served).toBeGreaterThanOrEqual(15);
    const events = await until(
      'a crash reported',
      async () => {
        const e = (await t.get(`${path}/events?limit=100`, { token: ann.token })).json
          .data as any[];
        return e.some((x) => x.type === 'replica' && ['crashed', 'oom'].includes(x.detail?.state))
          ? e
          : undefined;
      },
      60_000,
      context,
    );
    expect(events.length).toBeGreaterThan(0);
    await online((f) => f.replicas.filter((r: any) => r.state === 'healthy').length === 2);
    await until(
      'two tasks again',
      async () =>
        (
          await docker.listContainers({
            filters: JSON.stringify({
              label: [`frameplane.frame=${frame.id}`],
              status: ['running'],
            }),
          })
        ).length === 2,
      60_000,
      context,
    );

    // A broken build: the deployment fails, the service keeps its tasks, the frame stays Online.
    repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'demo',
          private: true,
          scripts: { start: 'node server.js', build: 'exit 2' },
        }),
      },
      'broken',
    );
    expect((await t.post(`${path}/deploy`, { token: ann.token, body: {} })).status).toBe(202);
    const kept = await online((f) => f.latest_deployment?.status === 'failed');
    expect(kept.latest_deployment.failure_reason).toBe('build_failed');
    expect(await get(frame)).toMatchObject({ status: 200 });

    // A release that crashes at boot while v1 serves: its deployment fails with crash, reported
    // once; the service goes back to v1 (swarm's rollback, or the agent), the frame is Online
    // again, nothing trips, and the agent does not send it again.
    const serving = kept.serving;
    expect(serving?.deployment_id).toBeTruthy();
    let answered = 0;
    let missed = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const r = await get(frame);
        if ('body' in r && r.status === 200 && r.body.startsWith('hello v1')) answered++;
        else missed++;
        await new Promise((r) => setTimeout(r, 200)); // the watcher's pace, not a wait
      }
    })();
    repo.pushFiles(
      { ...app('v2'), 'server.js': `console.log('v2 failing on purpose'); process.exit(1);` },
      'crash at boot',
    );
    const bad = await t.post(`${path}/deploy`, { token: ann.token, body: {} });
    expect(bad.status).toBe(202);
    const failed = await online(
      (f) => f.latest_deployment?.id === bad.json.id && f.latest_deployment.status === 'failed',
    );
    expect(failed).toMatchObject({
      desired_state: 'running',
      serving,
      latest_deployment: { failure_reason: 'crash' },
      backoff: { tripped_at: null },
    });
    const label = 'frameplane.deployment';
    await until(
      'the service back on v1, two tasks of it running',
      async () => {
        const [s] = await docker.listServices({
          filters: JSON.stringify({ name: [serviceName(frame.id)] }),
        });
        const running = await docker.listContainers({
          filters: JSON.stringify({ label: [`${label}=${serving.deployment_id}`] }),
        });
        return (
          (s?.Spec as any)?.TaskTemplate.ContainerSpec.Labels[label] === serving.deployment_id &&
          running.length === 2
        );
      },
      120_000,
      context,
    );
    await online((f) => f.replicas.filter((r: any) => r.state === 'healthy').length === 2);
    // A fixed time on purpose: 5 s more prove v1 keeps answering and v2 is not tried again.
    await new Promise((r) => setTimeout(r, 5000));
    watching = false;
    await watch;
    // Swarm may still swap slot 1's task after its rollback (start-first: a replica Starting
    // beside the one that serves): the frame is Online again once it has, nothing tripped.
    const after = await online((f) => f.replicas.every((r: any) => r.state === 'healthy'));
    expect(after).toMatchObject({
      desired_state: 'running',
      serving,
      backoff: { tripped_at: null },
    });
    const history = (await t.get(`${path}/events?limit=200`, { token: ann.token })).json.data;
    expect(history.some((e: any) => e.type === 'backoff_tripped')).toBe(false);
    expect(
      history.filter((e: any) => e.type === 'replica' && e.detail?.deployment_id === bad.json.id),
    ).toHaveLength(1);
    // v1 answers throughout, within what the kill above allows: while swarm swaps slot 1's task
    // (start-first) and rolls it back, connections may be reset for about a second.
    expect(answered).toBeGreaterThan(20);
    expect(answered).toBeGreaterThanOrEqual(0.75 * (answered + missed));
    expect(await get(frame)).toMatchObject({
      status: 200,
      body: expect.stringMatching(/^hello v1/),
    });

    // One that works takes over.
    repo.pushFiles(app('v4'), 'v4');
    const fix = await t.post(`${path}/deploy`, { token: ann.token, body: {} });
    expect(fix.status).toBe(202);
    await online((f) => f.serving?.deployment_id === fix.json.id);
    await until(
      'v4 answers',
      async () => {
        const r = await get(frame);
        return 'body' in r && r.body.startsWith('hello v4');
      },
      60_000,
      context,
    );

    // Back to v1's release: its image again, nothing fetched, nothing built.
    const back = await t.post(`${path}/deployments/${serving!.deployment_id}/rollback`, {
      token: ann.token,
    });
    expect(back.status, back.text).toBe(202);
    await online((f) => f.serving?.deployment_id === back.json.id);
    await until(
      'v1 answers again',
      async () => {
        const r = await get(frame);
        return 'body' in r && r.body.startsWith('hello v1');
      },
      60_000,
      context,
    );
    const logs = (await t.get(`${path}/logs?tail=200`, { token: ann.token })).json.data
      .map((l: { line: string }) => l.line)
      .join('\n');
    expect(logs).toContain(`deployment ${back.json.id}: the image of ${serving!.deployment_id}`);
    const rolled = (await t.get(`${path}/deployments/${back.json.id}`, { token: ann.token })).json;
    expect(rolled.image).toMatch(/^sha256:/);
    expect(rolled.changes.commits.to).toBe(rolled.commit_sha);
  });

  it('gives an image that asks for it a read-only root; a volume added rolls out at once', {
    timeout: 300_000,
  }, async () => {
    // Not the usual app uid: a new volume is handed to the uid the image runs as.
    const app = readOnlyRootApp(inject('frameBaseImage'), '1001:1001');
    repo.pushFiles(app, 'read-only root', 'read-only');
    const { ann, project, space, agentId, online, get } = await world();
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: agentId,
      port: 8080,
      git_repository: 'app',
      git_repository_owner: 'acme',
      git_repository_branch: 'read-only',
    });
    const path = framePath(frame);
    await online(path, (x) => x.latest_deployment?.status === 'succeeded');
    // No deploy: the service's template changes, so swarm replaces the task with one that
    // mounts the volume.
    const vol = await t.post(`${path}/volumes`, {
      token: ann.token,
      body: { name: 'data', mount_path: '/data', size_gb: 1 },
    });
    expect(vol.status, vol.text).toBe(201);
    let last = '';
    const said = await until(
      'the new task to write its volume',
      async () => {
        const r = await get(frame);
        last = 'body' in r ? r.body : r.error;
        return last.includes('"data":true') ? last : undefined;
      },
      60_000,
      () => `the frame said: ${last}`,
    );
    expect(JSON.parse(said)).toEqual({ root: 'EROFS', tmp: true, data: true });
    const [svc] = await docker.listServices({
      filters: JSON.stringify({ name: [serviceName(frame.id)] }),
    });
    const spec = (svc!.Spec as any).TaskTemplate.ContainerSpec;
    expect(spec.ReadOnly).toBe(true);
    expect(spec.Mounts.map((m: { Type: string; Target: string }) => [m.Type, m.Target])).toEqual(
      expect.arrayContaining([
        ['tmpfs', '/tmp'],
        ['volume', '/data'],
      ]),
    );
  });

  it('with a registry, pushes each image there and leaves the placement to swarm', {
    timeout: 300_000,
  }, async () => {
    registry = await startRegistry();
    repo.pushFiles(app('v3'), 'v3');
    const { ann, project, space, agentId, online, get } = await world({
      FRAME_REGISTRY: registry.address,
    });
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: agentId,
      port: 8080,
      replica_count: 2,
      git_repository: 'app',
      git_repository_owner: 'acme',
    });
    const f = await online(framePath(frame), (x) => x.latest_deployment?.status === 'succeeded');
    const [svc] = await docker.listServices({
      filters: JSON.stringify({ name: [serviceName(frame.id)] }),
    });
    const spec = svc!.Spec as any;
    // Swarm pins the image by digest once it resolved it from the registry.
    expect(spec.TaskTemplate.ContainerSpec.Image).toMatch(
      new RegExp(`^${registry.address}/frameplane/[a-z0-9-]+:${f.serving.commit_sha}`),
    );
    expect(spec.TaskTemplate.Placement?.Constraints ?? []).toEqual([]);
    expect(await registry.catalog()).toContain(
      `frameplane/${frame.id.toLowerCase().replace(/_/g, '-')}`,
    );
    expect(await get(frame)).toMatchObject({ status: 200 });
  });
});
