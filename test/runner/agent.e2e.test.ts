// The reference agent end to end: the real service on a real port, a real bare git repository,
// the agent as a child process (`node bin/frameplane.mjs agent`) running a tiny Node app as
// local processes. Create, scale, move the port, stop, start, a deploy that crashes at boot
// failing while the release that serves keeps serving, a fix taking over, an agent killed and
// restarted that adopts its replicas, and a first deploy that crashes tripping the back-off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser } from '../helpers/factories.ts';
import { ADMIN, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { freePort } from '../../src/runner/processes.ts';
import { appProcesses, gitFixture, hit, killApps, sleep, until } from './fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));

let t: TestApp;
let server: string;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let agent: ChildProcess | undefined;
let agentOutput: string[] = [];
const context = () => `agent output (last lines):\n${agentOutput.join('\n')}`;

function startAgent(token: string) {
  agentOutput = [];
  const child = spawn(
    process.execPath,
    [BIN, 'agent', '--server', server, '--token', token, '--data', join(tmp, 'agent')],
    {
      env: { ...process.env, GIT_BASE_URL: repo.gitBaseUrl, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  for (const s of [child.stdout!, child.stderr!]) {
    s.on('data', (d: Buffer) => {
      agentOutput = [...agentOutput, ...d.toString().split('\n').filter(Boolean)].slice(-80);
    });
  }
  agent = child;
}

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  server = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-agent-e2e-'));
  repo = gitFixture(tmp);
  repo.pushApp('v1');
});

afterAll(async () => {
  agent?.kill('SIGKILL');
  if (tmp) killApps(tmp);
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the reference agent runs frames as local processes', () => {
  it('creates, scales, moves, stops, starts, outlives a crashing release and its own restart', {
    timeout: 300_000,
  }, async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const space = await defaultSpace(t, ann, project.id);
    const reg = await t.post(`/v2/projects/${project.id}/agents`, {
      token: ann.token,
      body: { name: 'laptop' },
    });
    expect(reg.status, reg.text).toBe(201);
    startAgent(reg.json.token);

    const [port1, port2] = [await freePort(), await freePort()];
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: reg.json.id,
      port: port1,
      git_repository: 'app',
      git_repository_owner: 'acme',
    });
    const path = framePath(frame);
    const status = (want: string, test: (f: any) => boolean = () => true, timeoutMs = 60_000) =>
      until(
        `status ${want}`,
        async () => {
          const f = (await t.get(`${path}?wait_for=${want}&timeout=10`, { token: ann.token })).json;
          return f.status === want && test(f) ? f : undefined;
        },
        timeoutMs,
        context,
      );
    const answers = (port: number, body: RegExp) =>
      until(
        `${body} on port ${port}`,
        async () => {
          const r = await hit(port);
          return 'body' in r && body.test(r.body) ? r : undefined;
        },
        30_000,
        context,
      );
    const closed = (port: number) =>
      until(
        `port ${port} closed`,
        async () => {
          const r = await hit(port);
          return 'error' in r && r.error === 'ECONNREFUSED';
        },
        30_000,
        context,
      );
    const processes = (n: number) =>
      until(`${n} app processes`, async () => appProcesses(tmp).length === n, 30_000, context);

    // Created: fetched from git, built, started, healthy, served on the frame's port.
    await status('Online');
    expect(await answers(port1, /^hello v1 from \d+$/)).toMatchObject({ status: 200 });
    await processes(1);

    // The app's own output reaches the frame's logs.
    const logs = await until(
      'app logs',
      async () => {
        const r = await t.get(`${path}/logs?limit=200`, { token: ann.token });
        return r.json.data.some((l: any) => /app v1 listening on \d+/.test(l.line))
          ? r.json.data
          : undefined;
      },
      20_000,
      context,
    );
    expect(logs.find((l: any) => /app v1 listening/.test(l.line))).toMatchObject({ replica: 0 });

    // Scale to three: three replicas, each in its own sandbox, all serving.
    expect((await t.patch(path, { token: ann.token, body: { replica_count: 3 } })).status).toBe(
      200,
    );
    await status('Online', (f) => f.replicas.filter((r: any) => r.state === 'healthy').length >= 3);
    const bodies = new Set<string>();
    for (let i = 0; i < 9; i++) {
      const r = await hit(port1);
      if ('body' in r) bodies.add(r.body);
    }
    expect(bodies.size).toBe(3);
    await processes(3);

    // A new port: the proxy moves; the old port no longer answers.
    expect((await t.patch(path, { token: ann.token, body: { port: port2 } })).status).toBe(200);
    await status(
      'Online',
      (f) =>
        f.latest_deployment?.trigger === 'reroll' && f.latest_deployment?.status === 'succeeded',
    );
    await answers(port2, /^hello v1 from \d+$/);
    await closed(port1);
    await processes(3);

    // Stop: the port closes, every replica goes, the frame is Stopped.
    expect((await t.post(`${path}/stop`, { token: ann.token })).status).toBe(202);
    await status('Stopped', (f) => f.status_reason === null);
    await closed(port2);
    await processes(0);

    // Start: back online.
    expect((await t.post(`${path}/start`, { token: ann.token })).status).toBe(202);
    await status('Online');
    await answers(port2, /^hello v1 from \d+$/);

    // A commit that exits at once, while the release before serves (CONTRACT 5: a new release
    // takes over only once healthy): its deployment fails with crash, the serving release keeps
    // answering throughout, the frame stays Online and nothing trips.
    const serving = (await status('Online')).serving;
    expect(serving?.deployment_id).toBeTruthy();
    const misses: unknown[] = [];
    let served = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const r = await hit(port2);
        if ('body' in r && r.status === 200 && /^hello v1 from \d+$/.test(r.body)) served++;
        else misses.push(r);
        await sleep(100);
      }
    })();
    repo.pushApp('v2', true);
    const bad = await t.post(`${path}/deploy`, { token: ann.token });
    expect(bad.status, bad.text).toBe(202);
    const failed = await status(
      'Online',
      (f) => f.latest_deployment?.id === bad.json.id && f.latest_deployment.status === 'failed',
    );
    expect(failed).toMatchObject({
      status_reason: null,
      desired_state: 'running',
      serving,
      latest_deployment: {
        failure_reason: 'crash',
        failure_message: expect.stringMatching(/exited \(/),
      },
      backoff: { tripped_at: null },
    });
    // Longer than the first restart delays (1 + 2 + 4 s): the agent does not try it again.
    await sleep(9000);
    watching = false;
    await watch;
    expect(misses).toEqual([]);
    expect(served).toBeGreaterThan(30);
    const after = (await t.get(path, { token: ann.token })).json;
    expect(after).toMatchObject({
      status: 'Online',
      desired_state: 'running',
      serving,
      backoff: { crash_streak: 0, tripped_at: null },
      latest_deployment: { id: bad.json.id, status: 'failed' },
    });
    const events = (await t.get(`${path}/events?limit=100`, { token: ann.token })).json.data;
    const crashes = events.filter(
      (e: any) => e.type === 'replica' && e.detail?.deployment_id === bad.json.id,
    );
    expect(crashes).toHaveLength(1); // reported once, never restarted
    expect(events.some((e: any) => e.type === 'backoff_tripped')).toBe(false);
    await processes(3);

    // A fix, deployed: Online again, serving the new version.
    repo.pushApp('v3');
    const fix = await t.post(`${path}/deploy`, { token: ann.token });
    expect(fix.status, fix.text).toBe(202);
    await status(
      'Online',
      (f) => f.latest_deployment?.id === fix.json.id && f.serving?.deployment_id === fix.json.id,
    );
    await answers(port2, /^hello v3 from \d+$/);
    await processes(3);

    // The service goes away for a while: the frame keeps serving; when it is back, the agent syncs again.
    const listening = t.app.server.address() as { port: number };
    await new Promise<void>((r) => {
      t.app.server.close(() => r());
      t.app.server.closeAllConnections();
    });
    await sleep(1500);
    await answers(port2, /^hello v3 from \d+$/);
    const away = new Date();
    await new Promise<void>((r) => t.app.server.listen(listening.port, '127.0.0.1', () => r()));
    await until(
      'the agent syncs again',
      async () => {
        const row = await t.db
          .selectFrom('agents')
          .select('last_seen_at')
          .where('id', '=', reg.json.id)
          .executeTakeFirstOrThrow();
        return row.last_seen_at !== null && row.last_seen_at.getTime() > away.getTime();
      },
      30_000,
      context,
    );

    // The agent dies. Its replicas live on, but once it is offline the service refuses stop and start.
    const before = appProcesses(tmp).sort();
    agent!.kill('SIGKILL');
    await new Promise((r) => agent!.once('exit', r));
    expect(
      (
        await t.post('/v2/admin/clock', {
          token: ADMIN,
          body: { advance_seconds: t.config.agentOfflineAfterSeconds + 5 },
        })
      ).status,
    ).toBe(200);
    expectProblem(await t.post(`${path}/stop`, { token: ann.token }), 503, 'agent_offline');
    expectProblem(await t.post(`${path}/start`, { token: ann.token }), 503, 'agent_offline');

    // Restarted, it adopts the same processes: no duplicates, the port answers, Online.
    startAgent(reg.json.token);
    await until(
      'agent online',
      async () => {
        const r = await t.get(`/v2/projects/${project.id}/agents`, { token: ann.token });
        return r.json.data.find((a: any) => a.id === reg.json.id)?.online;
      },
      30_000,
      context,
    );
    await answers(port2, /^hello v3 from \d+$/);
    await status('Online');
    await sleep(2000); // time for a duplicate to appear, if the agent were to start one
    expect(appProcesses(tmp).sort()).toEqual(before);
    expect(agentOutput.join('\n')).toMatch(/"adopted":3/);

    // And it controls them: a stop ends exactly those processes.
    expect((await t.post(`${path}/stop`, { token: ann.token })).status).toBe(202);
    await status('Stopped', (f) => f.status_reason === null);
    await closed(port2);
    await processes(0);

    // A first deploy that crashes at boot (nothing serves): restarts with delays, and five crashes
    // in a row trip the back-off and stop the frame.
    repo.pushApp('v4', true);
    const port3 = await freePort();
    const first = await newFrame(t, ann, project.id, space, {
      name: 'first',
      agent_id: reg.json.id,
      port: port3,
      git_repository: 'app',
      git_repository_owner: 'acme',
    });
    const tripped = await until(
      'the back-off of a first deploy',
      async () => {
        const f = (await t.get(framePath(first), { token: ann.token })).json;
        return f.status === 'Stopped' && f.status_reason === 'backoff_tripped' ? f : undefined;
      },
      90_000,
      context,
    );
    expect(tripped.backoff).toMatchObject({ threshold: 5 });
    expect(tripped.backoff.tripped_at).toBeTruthy();
    expect(tripped.backoff.crash_streak).toBeGreaterThanOrEqual(5);
    await closed(port3);
    await processes(0);
  });
});
