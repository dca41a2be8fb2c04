// PostgreSQL restarted under load. The service runs as a child process against a PostgreSQL of
// the test's own; a few loops of authenticated reads and writes keep it busy while the database
// goes away for about 3 s and comes back on the same port: once by a fast shutdown (a planned
// restart or failover: sessions are told) and once by an immediate one (a crash: every server
// process quits at once, and the next start runs crash recovery). Required (issue): readyz says 503 while the database is down; every request that
// fails, fails cleanly (503 problem+json `database_unavailable`, quickly, never a 500 and never a
// 401 for a valid token); and the same process recovers: requests, the job worker and the
// LISTEN connection (token revocations, agent long polls) all work again without a restart.
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ADMIN_TOKEN,
  http,
  killAll,
  report,
  sleep,
  startInstance,
  stats,
  startLoad,
  until,
  type HttpReply,
  type Sample,
} from './helpers/service.ts';
import { openDatabase, unique } from './helpers/seed.ts';
import { ownPostgres, type OwnPostgres } from './helpers/postgres.ts';
import type { Database } from '../../src/db/database.ts';

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  killAll();
  for (const c of cleanup) await c().catch(() => {});
});

async function restartUnderLoad(mode: 'fast' | 'immediate') {
  const pg: OwnPostgres = await ownPostgres();
  cleanup.push(() => pg.destroy());
  let db: Database | undefined;
  cleanup.unshift(async () => {
    await db?.destroy();
  });
  const svc = await startInstance('svc', { DATABASE_URL: pg.url, ADMIN_TOKEN });
  const pid = svc.child.pid;
  const call = (method: string, path: string, o: Parameters<typeof http>[3] = {}) =>
    http(svc.base, method, path, { timeoutMs: 20_000, ...o });

  // A user, a project with a frame on a cloud agent, a team; and tokens never used yet, so the
  // outage also meets the uncached token lookup.
  const signup = await call('POST', '/v2/auth/signup', {
    body: { email: `pg-${unique()}@example.test`, password: 'a-long-enough-password' },
  });
  expect(signup.status, signup.text).toBe(201);
  const token = signup.json.access_token as string;
  const project = (await call('POST', '/v2/projects', { token, body: { name: 'Restart' } })).json;
  const team = (
    await call('POST', '/v2/teams', { token, body: { name: 'Restart', slug: `pg-${unique()}` } })
  ).json;
  const freshTokens: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await call('POST', '/v2/user/tokens', { token, body: { name: `unused-${i}` } });
    expect(r.status, r.text).toBe(201);
    freshTokens.push(r.json.token);
  }

  // The load: eight loops of reads and writes (transactions of several statements, so that the
  // outage also lands between two statements of one), and a readyz probe every 100 ms.
  const requests: Array<[string, () => Promise<HttpReply>]> = [
    ['GET /v2/user', () => call('GET', '/v2/user', { token })],
    [
      'POST /v2/projects',
      () => call('POST', '/v2/projects', { token, body: { name: `p-${unique()}` } }),
    ],
    ['GET /v2/projects/{id}', () => call('GET', `/v2/projects/${project.id}`, { token })],
    [
      'PATCH /v2/projects/{id}',
      () => call('PATCH', `/v2/projects/${project.id}`, { token, body: { name: `r-${unique()}` } }),
    ],
    ['GET /v2/teams', () => call('GET', '/v2/teams', { token })],
    [
      'POST /v2/teams',
      () => call('POST', '/v2/teams', { token, body: { name: 'Load', slug: `load-${unique()}` } }),
    ],
  ];
  const load = startLoad(svc.base, requests, 8, 100);
  const { samples, ready } = load;

  // A fixed time on purpose: 2 s of load before the outage, the service's pool warm.
  await sleep(2000);
  // The crash lands 1 s before a minute boundary, so the outage spans one: the queued minute
  // sweep comes due while the database is away (graphile-worker's own cron once ended the
  // process there).
  if (mode === 'immediate') await sleep(60_000 - ((Date.now() + 1000) % 60_000));
  const stopAt = Date.now();
  await pg.stop(mode);
  const downAt = Date.now();
  // The service knows the database is down: readyz, probed every 100 ms, says so.
  await until(
    'readyz to say 503 after the stop',
    async () => ready.some((s) => s.startedAt >= downAt && s.status === 503),
    (seen) => seen,
    10_000,
    50,
  );
  // Tokens the service has never seen, while the database is down: unavailable, not unknown.
  const unseen = await Promise.all(freshTokens.map((t) => call('GET', '/v2/user', { token: t })));
  // A fixed time on purpose: the outage itself, the database down 2 s more under load.
  await sleep(2000);
  const startAt = Date.now();
  await pg.start();
  const upAt = Date.now();
  // A fixed time on purpose: 8 s of load after the restart, the last 4 s checked below.
  await sleep(8000);
  await load.stop();

  // Never a 500, never a hang, never an unexpected status; every failure is the clean 503.
  const all = [
    ...samples,
    ...ready,
    ...unseen.map((r) => ({ ...r, what: 'unseen token', startedAt: downAt, endedAt: downAt })),
  ];
  const bad = all.filter((r) => ![200, 201, 503].includes(r.status));
  // On failure, what the service logged: errors (level 50+), and its last words if it died.
  if (bad.length || svc.child.exitCode !== null) {
    const file = join(tmpdir(), `frameplane-faults-pg-${mode}.log`);
    writeFileSync(file, svc.log());
    const errors = svc
      .log()
      .split('\n')
      .filter((l) => /"level":(50|60)/.test(l) || (l && !l.startsWith('{')));
    console.log(
      `service log (${mode} shutdown; whole log in ${file}), exit ${svc.child.exitCode ?? svc.child.signalCode}:\n${errors.slice(0, 20).join('\n')}`,
    );
  }
  expect(svc.child.exitCode, 'the service process is still running').toBeNull();
  expect(bad.map((r) => `${r.what}: ${r.status} ${r.error ?? ''} ${r.text.slice(0, 200)}`)).toEqual(
    [],
  );
  for (const r of all.filter((x) => x.status === 503)) {
    expect(r.headers.get('content-type'), r.text).toMatch(/^application\/problem\+json/);
    expect(r.json, r.text).toMatchObject({ status: 503, code: 'database_unavailable' });
    expect(r.headers.get('retry-after')).toBeTruthy();
  }
  const slowest = Math.max(...all.map((r) => r.ms));
  expect(slowest, 'no request waits more than a few seconds').toBeLessThan(5000);
  for (const r of unseen) expect(r.status, r.text).toBe(503);

  // readyz: 503 while the database was down, 200 before and after.
  const down = (s: Sample) => s.startedAt >= downAt && s.endedAt <= startAt;
  expect(ready.filter(down).length).toBeGreaterThan(5);
  expect(ready.filter(down).every((s) => s.status === 503)).toBe(true);
  expect(samples.filter(down).length).toBeGreaterThan(0);
  expect(samples.filter(down).every((s) => s.status === 503)).toBe(true);
  const readyAgain = ready.find((s) => s.startedAt >= upAt && s.status === 200);
  const firstOk = samples.find((s) => s.startedAt >= upAt && s.status < 300);
  expect(readyAgain, 'readyz answers 200 again').toBeDefined();
  expect(firstOk, 'requests succeed again').toBeDefined();
  // Recovered for good: the last 4 s of load all succeeded.
  const tail = samples.filter((s) => s.startedAt >= upAt + 4000);
  expect(tail.length).toBeGreaterThan(10);
  expect(
    tail
      .filter((s) => s.status >= 300)
      .map((s) => `${s.what}: ${s.status} ${s.text.slice(0, 120)}`),
  ).toEqual([]);
  expect(svc.child.exitCode).toBeNull();
  expect(svc.child.pid).toBe(pid);

  // The job worker is back: an invitation's e-mail (no SMTP_URL: kept and logged) is handled.
  db = openDatabase(pg.url);
  const guest = `guest-${unique()}@example.test`;
  const inv = await call('POST', `/v2/teams/${team.id}/invitations`, {
    token,
    body: { email: guest, role: 'member' },
  });
  expect(inv.status, inv.text).toBe(201);
  const mailStarted = Date.now();
  await until(
    'the worker to handle the e-mail after the restart',
    () =>
      db!.selectFrom('emails').select('status').where('to_address', '=', guest).executeTakeFirst(),
    (r) => r?.status === 'logged',
    20_000,
  );
  const mailMs = Date.now() - mailStarted;

  // The LISTEN connection is back: a revocation written and NOTIFYed by another process (as a
  // second instance would) is honoured at once, though the token is cached here.
  const victim = await call('POST', '/v2/user/tokens', { token, body: { name: 'victim' } });
  expect((await call('GET', '/v2/user', { token: victim.json.token })).status).toBe(200);
  await sql`update access_tokens set revoked_at = now() where id = ${victim.json.id}`.execute(db);
  await sql`select pg_notify('frameplane_tokens', ${victim.json.id})`.execute(db);
  const revokedAt = Date.now();
  const refused = await until(
    'the revoked token to be refused',
    () => call('GET', '/v2/user', { token: victim.json.token }),
    (r) => r.status === 401,
    5000,
    20,
  );
  const revokeMs = Date.now() - revokedAt;
  expect(refused.status).toBe(401);
  expect(revokeMs).toBeLessThan(1000);

  // ...and an agent's long poll wakes on a stop.
  const agent = await call('POST', '/v2/admin/agents', {
    token: ADMIN_TOKEN,
    body: { name: `cloud-${unique()}` },
  });
  expect(agent.status, agent.text).toBe(201);
  const spaces = await call('GET', `/v2/projects/${project.id}/spaces`, { token });
  const frame = await call(
    'POST',
    `/v2/projects/${project.id}/spaces/${spaces.json.data[0].id}/frames`,
    {
      token,
      body: {
        name: 'web',
        owner_id: signup.json.user.id,
        git_repository: 'app',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port: 8080,
      },
    },
  );
  expect(frame.status, frame.text).toBe(201);
  expect((await call('POST', '/v2/agent/sync', { token: agent.json.token, body: {} })).status).toBe(
    200,
  );
  // The poll says its edge port, stored by the statement that reads its state: once stored, the
  // poll holds (the digest does not include the edge, so nothing else moves).
  const poll = call('POST', '/v2/agent/sync?wait=10', {
    token: agent.json.token,
    body: { edge: { http_port: 20_001, https_port: null } },
  }).then((r) => ({ r, at: Date.now() }));
  await until(
    'the poll to hold',
    () =>
      db!
        .selectFrom('agents')
        .select('edge_http_port')
        .where('id', '=', agent.json.id)
        .executeTakeFirst(),
    (row) => row?.edge_http_port === 20_001,
    10_000,
    20,
  );
  const stop = await call(
    'POST',
    `/v2/projects/${project.id}/spaces/${spaces.json.data[0].id}/frames/${frame.json.id}/stop`,
    { token },
  );
  expect(stop.status, stop.text).toBe(202);
  const stoppedAt = Date.now();
  const woke = await poll;
  expect(woke.r.status).toBe(200);
  expect(woke.r.json.frames.find((f: any) => f.frame_id === frame.json.id)?.desired_state).toBe(
    'stopped',
  );
  const wakeMs = woke.at - stoppedAt;
  expect(wakeMs).toBeLessThan(1500);

  const failed = samples.filter((s) => s.status === 503);
  report(`postgres restart (${mode} shutdown)`, {
    requests: samples.length,
    ok: samples.filter((s) => s.status < 300).length,
    failed_503: failed.length,
    other_statuses: bad.length,
    readyz_503_while_down: ready.filter(down).length,
    stop_ms: downAt - stopAt,
    start_ms: upAt - startAt,
    down_ms: upAt - downAt,
    latency_ms: stats(samples.map((s) => s.ms)),
    latency_503_ms: stats(failed.map((s) => s.ms)),
    slowest_ms: Math.round(slowest),
    readyz_200_after_start_ms: readyAgain!.endedAt - upAt,
    first_success_after_start_ms: firstOk!.endedAt - upAt,
    worker_after_restart_ms: mailMs,
    revocation_after_restart_ms: revokeMs,
    long_poll_wake_ms: wakeMs,
  });
  expect(await svc.kill('SIGTERM')).toBe(0);
}

describe('PostgreSQL restarted under load', () => {
  it(
    'fast shutdown: readyz reports it, requests fail cleanly with 503, and the service recovers without a restart',
    () => restartUnderLoad('fast'),
    180_000,
  );
  it(
    'immediate shutdown (crash) across a minute boundary: the same',
    () => restartUnderLoad('immediate'),
    240_000,
  );
});
