// The reference agent end to end: the real service on a real port, a real bare git repository,
// the agent as a child process (`node bin/frameplane.mjs agent`) running a tiny Node app as
// local processes, each frame reached through the agent's edge at its own hostname. Create,
// scale, a second frame on the same port, stop, start, a deploy that crashes at boot failing
// while the release that serves keeps serving, a fix taking over, an agent killed and restarted
// that adopts its replicas, and a first deploy that crashes tripping the back-off.
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
import {
  appProcesses,
  gitFixture,
  hitFrame,
  isEdgePage,
  killApps,
  sleep,
  until,
} from './fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));

let t: TestApp;
let server: string;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let agent: ChildProcess | undefined;
let agentOutput: string[] = [];
let edgePort: number;
const context = () => `agent output (last lines):\n${agentOutput.join('\n')}`;

function startAgent(token: string) {
  agentOutput = [];
  const child = spawn(
    process.execPath,
    [
      BIN,
      'agent',
      '--server',
      server,
      '--token',
      token,
      '--data',
      join(tmp, 'agent'),
      '--edge-port',
      String(edgePort),
    ],
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
  edgePort = await freePort();
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
  it('creates, scales, shares a port, stops, starts, outlives a bad release and its restart', {
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

    const port = 8080; // the apps' own port, inside each sandbox: nothing listens on it here
    const frame = await newFrame(t, ann, project.id, space, {
      agent_id: reg.json.id,
      port,
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
    const host: string = frame.hostname;
    const answers = (hostname: string, body: RegExp) =>
      until(
        `${body} at ${hostname}`,
        async () => {
          const r = await hitFrame(edgePort, hostname);
          return 'body' in r && body.test(r.body) ? r : undefined;
        },
        30_000,
        context,
      );
    /** The edge's own page of this kind at the hostname, not the app. */
    const page = (hostname: string, kind: string) =>
      until(
        `the ${kind} page at ${hostname}`,
        async () => isEdgePage(await hitFrame(edgePort, hostname), kind),
        30_000,
        context,
      );
    const processes = (n: number) =>
      until(`${n} app processes`, async () => appProcesses(tmp).length === n, 30_000, context);

    // Created: fetched from git, built, started, healthy, served at its hostname.
    expect(await status('Online')).toMatchObject({ url: `http://${host}:${edgePort}` });
    expect(await answers(host, /^hello v1 from \d+$/)).toMatchObject({ status: 200 });
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
      const r = await hitFrame(edgePort, host);
      if ('body' in r) bodies.add(r.body);
    }
    expect(bodies.size).toBe(3);
    await processes(3);

    // A second frame on the same port runs beside it, each at its own hostname; deleted, its
    // hostname is no one's.
    const second = await newFrame(t, ann, project.id, space, {
      name: 'second',
      agent_id: reg.json.id,
      port,
      git_repository: 'app',
      git_repository_owner: 'acme',
    });
    expect(second.hostname).not.toBe(host);
    await until(
      'the second frame Online',
      async () => (await t.get(framePath(second), { token: ann.token })).json.status === 'Online',
      60_000,
      context,
    );
    await answers(second.hostname, /^hello v1 from 0$/);
    await answers(host, /^hello v1 from \d+$/);
    await processes(4);
    expect((await t.del(framePath(second), { token: ann.token })).status).toBe(200);
    await page(second.hostname, 'unknown_host');
    await processes(3);

    // Stop: the edge says so, every replica goes, the frame is Stopped.
    expect((await t.post(`${path}/stop`, { token: ann.token })).status).toBe(202);
    await status('Stopped', (f) => f.status_reason === null);
    await page(host, 'stopped');
    await processes(0);

    // Start: back online.
    expect((await t.post(`${path}/start`, { token: ann.token })).status).toBe(202);
    await status('Online');
    await answers(host, /^hello v1 from \d+$/);

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
        const r = await hitFrame(edgePort, host);
        if ('body' in r && r.status === 200 && /^hello v1 from \d+$/.test(r.body)) served++;
        else
          misses.push(
            'status' in r
              ? `${new Date().toISOString()} ${r.status} ${r.headers['x-frameplane-edge']}`
              : r,
          );
        await sleep(100); // the watcher's pace (a sample every 100 ms), not a wait
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
    // A fixed time on purpose: past the first restart delays (1 + 2 + 4 s, and 1 s for a
    // restart to show), the agent has not tried it again, and v1 served throughout.
    await sleep(8000);
    watching = false;
    await watch;
    // What the frame and its events said, should the edge have missed (a flake seen once in CI).
    const frameNow = async () =>
      JSON.stringify([
        (await t.get(path, { token: ann.token })).json,
        (await t.get(`${path}/events?limit=30`, { token: ann.token })).json.data,
      ]);
    if (misses.length > 0) expect(misses, `${await frameNow()}\n${context()}`).toEqual([]);
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
    await answers(host, /^hello v3 from \d+$/);
    await processes(3);

    // The service goes away for a while: the frame keeps serving; when it is back, the agent syncs again.
    const listening = t.app.server.address() as { port: number };
    const closedAt = Date.now();
    await new Promise<void>((r) => {
      t.app.server.close(() => r());
      t.app.server.closeAllConnections();
    });
    // Away for the agent too: its sync has failed (it says so), and the frame serves on.
    await until(
      'the agent to find the service away',
      async () =>
        agentOutput.some((l) => {
          try {
            const entry = JSON.parse(l);
            return /^sync failed/.test(entry.msg) && entry.time >= closedAt;
          } catch {
            return false;
          }
        }),
      30_000,
      context,
    );
    await answers(host, /^hello v3 from \d+$/);
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

    // The agent dies. Its replicas live on, unreachable with its edge gone, and once it is
    // offline the service refuses stop and start.
    const before = appProcesses(tmp).sort();
    agent!.kill('SIGKILL');
    await new Promise((r) => agent!.once('exit', r));
    expect(await hitFrame(edgePort, host)).toEqual({ error: 'ECONNREFUSED' });
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

    // Restarted, it adopts the same processes: no duplicates, its edge answers, Online.
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
    await answers(host, /^hello v3 from \d+$/);
    await status('Online');
    // A fixed time on purpose: proves the adopting agent starts no duplicate within it.
    await sleep(2000);
    expect(appProcesses(tmp).sort()).toEqual(before);
    expect(agentOutput.join('\n')).toMatch(/"adopted":3/);

    // And it controls them: a stop ends exactly those processes.
    expect((await t.post(`${path}/stop`, { token: ann.token })).status).toBe(202);
    await status('Stopped', (f) => f.status_reason === null);
    await page(host, 'stopped');
    await processes(0);

    // A first deploy that crashes at boot (nothing serves): restarts with delays, and five crashes
    // in a row trip the back-off and stop the frame.
    repo.pushApp('v4', true);
    const first = await newFrame(t, ann, project.id, space, {
      name: 'first',
      agent_id: reg.json.id,
      port,
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
    await page(first.hostname, 'stopped');
    await processes(0);
  });
});
