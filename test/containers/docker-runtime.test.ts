// The docker runtime end to end: the real service, a real git repository, the agent
// as a child process (`frameplane agent --runtime docker`) on a real Docker Engine. A frame
// goes Online in a container that is confined as documented; scales to 3 and back; an env
// change deploys on the same image; a broken build leaves the release that serves serving; an
// app past its memory limit is reported `oom`; a crashing app trips the back-off; an app that
// never listens ends `health_check_failed`; two frames on one port run side by side. Frames are
// reached through the agent's edge at their hostnames.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { freePort } from '../../src/runner/processes.ts';
import { dockerClient } from '../../src/runner/runtimes/docker.ts';
import { gitFixture, hitFrame, readOnlyRootApp, until } from '../runner/fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));
const MEMORY_MB = 96;
const docker = dockerClient();

let t: TestApp;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let agent: ChildProcess | undefined;
let output: string[] = [];
let ann: TestUser;
let project: { id: string };
let space: string;
let agentId: string;
let edgePort: number;
const context = () => `agent output (last lines):\n${output.join('\n')}`;

const app = (version: string, extra = '') => ({
  'package.json': JSON.stringify({
    name: 'demo',
    private: true,
    scripts: { start: 'node server.js' },
  }),
  'server.js': [
    `const http = require('http');`,
    extra,
    `http.createServer((req, res) => res.end('hello ${version} from ' + process.env.FRAMEPLANE_REPLICA + ' ' + (process.env.GREETING || '')))`,
    `  .listen(Number(process.env.PORT), () => console.log('app ${version} up as uid ' + process.getuid()));`,
  ].join('\n'),
});

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-docker-e2e-'));
  repo = gitFixture(tmp);
  repo.pushFiles(app('v1'), 'v1');
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
  const reg = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'docker-host' },
  });
  expect(reg.status, reg.text).toBe(201);
  agentId = reg.json.id;
  const server = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  edgePort = await freePort();
  agent = spawn(
    process.execPath,
    [
      BIN,
      'agent',
      '--server',
      server,
      '--data',
      join(tmp, 'agent'),
      '--runtime',
      'docker',
      '--edge-port',
      String(edgePort),
    ],
    {
      env: {
        ...process.env,
        FRAMEPLANE_AGENT_TOKEN: reg.json.token,
        GIT_BASE_URL: repo.gitBaseUrl,
        LOG_LEVEL: 'info',
        FRAME_MEMORY_MB: String(MEMORY_MB),
        FRAME_START_TIMEOUT_SECONDS: '15',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  for (const s of [agent.stdout!, agent.stderr!]) {
    s.on('data', (d: Buffer) => {
      output = [...output, ...d.toString().split('\n').filter(Boolean)].slice(-60);
    });
  }
});

afterAll(async () => {
  if (agent && agent.exitCode === null) {
    agent.kill('SIGTERM');
    await new Promise((r) => agent!.once('exit', r));
  }
  // What the agent left running (it leaves frames running on exit, for adoption) goes now.
  const left = await docker.listContainers({
    all: true,
    filters: JSON.stringify({ label: ['frameplane.frame'] }),
  });
  await Promise.all(
    left.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A frame of acme/app whose app listens on `port` in its container; its path and hostname. */
async function frameOn(port: number, extra: Record<string, unknown> = {}) {
  const frame = await newFrame(t, ann, project.id, space, {
    agent_id: agentId,
    port,
    git_repository: 'app',
    git_repository_owner: 'acme',
    ...extra,
  });
  return { path: framePath(frame), host: frame.hostname as string };
}

let last: unknown;
const statusOf = (
  path: string,
  want: string,
  test: (f: any) => boolean = () => true,
  timeoutMs = 120_000,
) =>
  until(
    `status ${want}`,
    async () => {
      const f = (await t.get(`${path}?wait_for=${want}&timeout=10`, { token: ann.token })).json;
      last = f;
      return f.status === want && test(f) ? f : undefined;
    },
    timeoutMs,
    context,
  ).catch(async (err) => {
    const events = (await t.get(`${path}/events?limit=50`, { token: ann.token })).json.data;
    throw new Error(
      `${(err as Error).message}\nframe: ${JSON.stringify(last)}\nevents: ${JSON.stringify(events)}\nlogs:\n${await frameLogs(path)}`,
    );
  });

const answers = (host: string, body: RegExp) =>
  until(
    `${body} at ${host}`,
    async () => {
      const r = await hitFrame(edgePort, host);
      return 'body' in r && body.test(r.body) ? r.body : undefined;
    },
    60_000,
    context,
  );

const containersOf = async (frameId: string) =>
  docker.listContainers({
    filters: JSON.stringify({ label: [`frameplane.frame=${frameId}`], status: ['running'] }),
  });

const frameLogs = async (path: string) =>
  (
    (await t.get(`${path}/logs?limit=500`, { token: ann.token })).json.data as Array<{
      line: string;
    }>
  )
    .map((l) => l.line)
    .join('\n');

describe('the docker runtime', () => {
  it('runs a frame in a confined container, scales it, and deploys env changes on the same image', {
    timeout: 300_000,
  }, async () => {
    const port = 8080;
    const { path, host } = await frameOn(port);
    const frameId = path.split('/').pop()!;
    const online = await statusOf(path, 'Online');
    expect(await answers(host, /^hello v1 from 0 $/)).toBeTruthy();

    // The deployment records the commit it runs, and the frame shows what serves.
    const deployments = (await t.get(`${path}/deployments`, { token: ann.token })).json.data;
    expect(deployments[0].commit_sha).toMatch(/^[0-9a-f]{40}$/);
    expect(
      online.serving?.commit_sha ??
        (await t.get(path, { token: ann.token })).json.serving?.commit_sha,
    ).toBe(deployments[0].commit_sha);

    // Confined as documented: labels, an unprivileged user, limits, no capabilities, loopback-only port.
    const [c] = await containersOf(frameId);
    expect(c).toBeDefined();
    const info = await docker.getContainer(c!.Id).inspect();
    expect(info.Config.Labels).toMatchObject({
      'frameplane.frame': frameId,
      'frameplane.replica': '0',
      'frameplane.deployment': deployments[0].id,
    });
    expect(info.Config.User).toBe('1000:1000');
    expect(info.HostConfig.Memory).toBe(MEMORY_MB * 1024 * 1024);
    expect(info.HostConfig.MemorySwap).toBe(MEMORY_MB * 1024 * 1024);
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges:true');
    expect(info.HostConfig.RestartPolicy?.Name).toBe('no');
    expect(info.HostConfig.PortBindings?.[`${port}/tcp`]?.[0]?.HostIp).toBe('127.0.0.1');
    expect(await frameLogs(path)).toMatch(/app v1 up as uid 1000/);

    // Scale to three and back to one.
    expect((await t.patch(path, { token: ann.token, body: { replica_count: 3 } })).status).toBe(
      200,
    );
    await statusOf(
      path,
      'Online',
      (f) => f.replicas.filter((r: any) => r.state === 'healthy').length >= 3,
    );
    const bodies = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const r = await hitFrame(edgePort, host);
      if ('body' in r) bodies.add(r.body);
    }
    expect(bodies).toEqual(new Set(['hello v1 from 0 ', 'hello v1 from 1 ', 'hello v1 from 2 ']));
    expect(await containersOf(frameId)).toHaveLength(3);
    expect((await t.patch(path, { token: ann.token, body: { replica_count: 1 } })).status).toBe(
      200,
    );
    await until(
      'one container',
      async () => (await containersOf(frameId)).length === 1,
      60_000,
      context,
    );

    // An env change deploys on the image already built for this commit.
    expect(
      (await t.put(`${path}/env`, { token: ann.token, body: { vars: { GREETING: 'bonjour' } } }))
        .status,
    ).toBe(200);
    expect((await t.post(`${path}/deploy`, { token: ann.token, body: {} })).status).toBe(202);
    await answers(host, /^hello v1 from 0 bonjour$/);
    await statusOf(path, 'Online', (f) => f.latest_deployment?.status === 'succeeded');
    expect(await frameLogs(path)).toMatch(/already built; reusing it/);

    // A broken build: the deployment fails with build_failed, v1 keeps serving, nothing counts as a crash.
    repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'demo',
          private: true,
          scripts: { start: 'node server.js', build: 'echo compiling; exit 3' },
        }),
      },
      'broken build',
    );
    expect((await t.post(`${path}/deploy`, { token: ann.token, body: {} })).status).toBe(202);
    const kept = await statusOf(path, 'Online', (f) => f.latest_deployment?.status === 'failed');
    expect(kept.latest_deployment.failure_reason).toBe('build_failed');
    expect(kept.backoff.crash_streak).toBe(0);
    expect(await answers(host, /^hello v1 from 0 bonjour$/)).toBeTruthy();
    const failed = (await t.get(`${path}/deployments`, { token: ann.token })).json.data[0];
    expect(failed).toMatchObject({ status: 'failed', failure_reason: 'build_failed' });
    expect(failed.failure_message).toMatch(/exit|returned a non-zero code/);
  });

  it('reports an app past its memory limit as oom, and trips the back-off of a crashing app', {
    timeout: 300_000,
  }, async () => {
    repo.pushFiles(
      app(
        'hungry',
        [
          // Allocate and touch memory well past the limit, outside the V8 heap.
          `const hog = []; setInterval(() => { const b = Buffer.alloc(16 * 1024 * 1024, 1); hog.push(b); }, 50);`,
        ].join('\n'),
      ),
      'hungry',
    );
    const { path } = await frameOn(8080);
    const oom = await until(
      'an oom event',
      async () => {
        const events = (await t.get(`${path}/events?limit=200`, { token: ann.token })).json
          .data as any[];
        return events.find((e) => e.type === 'replica' && e.detail?.state === 'oom');
      },
      120_000,
      context,
    );
    expect(oom.detail.state).toBe('oom');

    repo.pushFiles(
      app('crashing', `console.log('crashing on purpose'); process.exit(4);`),
      'crashing',
    );
    const { path: crashing } = await frameOn(8080);
    const stopped = await statusOf(
      crashing,
      'Stopped',
      (f) => f.status_reason === 'backoff_tripped',
      180_000,
    );
    expect(stopped.backoff.crash_streak).toBeGreaterThanOrEqual(5);
    await until(
      'no container left running',
      async () => (await containersOf(crashing.split('/').pop()!)).length === 0,
      60_000,
      context,
    );
  });

  it('ends an app that never listens with health_check_failed, and runs two frames on one port', {
    timeout: 300_000,
  }, async () => {
    repo.pushFiles(
      { ...app('deaf'), 'server.js': `console.log('not listening'); setInterval(() => {}, 1000);` },
      'deaf',
    );
    const { path: deaf } = await frameOn(8080);
    const failed = await statusOf(
      deaf,
      'Error',
      (f) => f.status_reason === 'health_check_failed',
      120_000,
    );
    expect(failed.latest_deployment.failure_reason).toBe('health_check_failed');

    // Two frames whose apps both listen on 3000, each in its own container, each at its own
    // hostname; one stopped, the other answers on.
    repo.pushFiles(app('v2'), 'v2');
    const one = await frameOn(3000, { name: 'one' });
    const two = await frameOn(3000, { name: 'two' });
    await statusOf(one.path, 'Online');
    await statusOf(two.path, 'Online');
    expect(await answers(one.host, /^hello v2 from 0 $/)).toBeTruthy();
    expect(await answers(two.host, /^hello v2 from 0 $/)).toBeTruthy();
    expect((await t.post(`${one.path}/stop`, { token: ann.token })).status).toBe(202);
    await statusOf(one.path, 'Stopped', (f) => f.status_reason === null); // no longer stopping
    expect(await hitFrame(edgePort, one.host)).toMatchObject({
      status: 503,
      headers: { 'x-frameplane-edge': 'stopped' },
    });
    expect(await hitFrame(edgePort, two.host)).toMatchObject({
      status: 200,
      body: 'hello v2 from 0 ',
    });
  });

  it('rolls back to an earlier release and restarts it, building nothing, failing no request', {
    timeout: 300_000,
  }, async () => {
    repo.pushFiles(app('r1'), 'r1');
    const { path, host } = await frameOn(8080);
    const frameId = path.split('/').pop()!;
    const succeeded = (id?: string) => (f: any) =>
      f.latest_deployment?.status === 'succeeded' && (!id || f.latest_deployment.id === id);
    await statusOf(path, 'Online', succeeded());
    await answers(host, /^hello r1 from 0 $/);
    const [r1] = (await t.get(`${path}/deployments`, { token: ann.token })).json.data;
    const one = async () => {
      await until('one container', async () => (await containersOf(frameId)).length === 1);
      const [c] = await containersOf(frameId);
      return { id: c!.Id, image: (await docker.getContainer(c!.Id).inspect()).Image };
    };
    const first = await one();
    repo.pushFiles(app('r2'), 'r2');
    expect((await t.post(`${path}/deploy`, { token: ann.token, body: {} })).status).toBe(202);
    await statusOf(path, 'Online', succeeded());
    await answers(host, /^hello r2 from 0 $/);
    expect((await one()).image).not.toBe(first.image);

    // Steady requests through the edge while it goes back and restarts.
    const failures: string[] = [];
    const bodies = new Set<string>();
    let going = true;
    const load = (async () => {
      while (going) {
        const r = await hitFrame(edgePort, host);
        if ('body' in r && r.status === 200) bodies.add(r.body);
        else failures.push(JSON.stringify(r).slice(0, 200));
      }
    })();
    const builds = (logs: string) => logs.match(/\[frameplane\] building /g)?.length ?? 0;
    const built = builds(await frameLogs(path));
    const back = await t.post(`${path}/deployments/${r1.id}/rollback`, { token: ann.token });
    expect(back.status, back.text).toBe(202);
    await statusOf(path, 'Online', succeeded(back.json.id));
    await answers(host, /^hello r1 from 0 $/);
    const rolled = await one();
    expect(rolled.image).toBe(first.image);
    const logs = await frameLogs(path);
    expect(logs).toContain(`deployment ${back.json.id}: the build of ${r1.id}`);
    expect(builds(logs)).toBe(built);

    const restart = await t.post(`${path}/restart`, { token: ann.token });
    expect(restart.status, restart.text).toBe(202);
    await statusOf(path, 'Online', succeeded(restart.json.id));
    const restarted = await one();
    expect(restarted.id).not.toBe(rolled.id);
    expect(restarted.image).toBe(first.image);

    // A config release: the same image with the new env, nothing built.
    const config = await t.patch(`${path}/env?deploy=true`, {
      token: ann.token,
      body: { vars: { GREETING: 'cfg' } },
    });
    expect(config.status, config.text).toBe(200);
    await statusOf(path, 'Online', succeeded(config.json.deployment.id));
    await answers(host, /^hello r1 from 0 cfg$/);
    expect((await one()).image).toBe(first.image);
    // Back to r2 with the env it ran: GREETING goes, as it was then.
    const r2 = (await t.get(`${path}/deployments?limit=50`, { token: ann.token })).json.data.find(
      (d: any) => d.trigger === 'manual' && d.status === 'succeeded',
    );
    const toR2 = await t.post(`${path}/deployments/${r2.id}/rollback`, { token: ann.token });
    expect(toR2.status, toR2.text).toBe(202);
    await statusOf(path, 'Online', succeeded(toR2.json.id));
    await answers(host, /^hello r2 from 0 $/);
    going = false;
    await load;
    expect(failures).toEqual([]);
    expect(bodies).toEqual(
      new Set(['hello r2 from 0 ', 'hello r1 from 0 ', 'hello r1 from 0 cfg']),
    );
    expect(builds(await frameLogs(path))).toBe(built);
    // The releases say what they ran (the agent's image ids) and what changed.
    const shown = (await t.get(`${path}/deployments/${toR2.json.id}`, { token: ann.token })).json;
    expect(shown.image).toBe((await one()).image);
    expect(shown.changes.env).toEqual({
      added: [],
      changed: [],
      removed: [{ key: 'GREETING', from: 'cfg' }],
    });
    const cfg = (
      await t.get(`${path}/deployments/${config.json.deployment.id}`, {
        token: ann.token,
      })
    ).json;
    expect(cfg).toMatchObject({ trigger: 'config', image: first.image, release_of: r1.id });
  });

  // Last: the Dockerfile it adds stays in the fixture's later commits.
  it('gives an image that asks for it a read-only root, with /tmp and its volumes writable', {
    timeout: 240_000,
  }, async () => {
    repo.pushFiles(readOnlyRootApp(inject('frameBaseImage')), 'read-only root', 'read-only');
    const { path, host } = await frameOn(8080, { git_repository_branch: 'read-only' });
    // Serving first: with nothing serving, a config release would build.
    const built = (await statusOf(path, 'Online')).latest_deployment;
    // Replicas already running keep their mounts: ?deploy=true releases the serving image again
    // with the volume (a config release, nothing built).
    const vol = await t.post(`${path}/volumes?deploy=true`, {
      token: ann.token,
      body: { name: 'data', mount_path: '/data', size_gb: 1 },
    });
    expect(vol.status, vol.text).toBe(201);
    expect(vol.json.deployment).toMatchObject({ trigger: 'config' });
    const release = vol.json.deployment.id;
    await statusOf(
      path,
      'Online',
      (f) => f.latest_deployment?.id === release && f.latest_deployment.status === 'succeeded',
    );
    const shown = (await t.get(`${path}/deployments/${release}`, { token: ann.token })).json;
    const first = (await t.get(`${path}/deployments/${built.id}`, { token: ann.token })).json;
    expect(shown).toMatchObject({ release_of: built.id, image: first.image });
    const said = await answers(host, /"data":true/);
    expect(JSON.parse(said)).toEqual({ root: 'EROFS', tmp: true, data: true });
    const [c] = await containersOf(path.split('/').pop()!);
    const info = await docker.getContainer(c!.Id).inspect();
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Tmpfs?.['/tmp']).toMatch(/size=96m/);
  });
});
