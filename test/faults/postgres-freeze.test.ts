// A database that stops answering without closing anything (a hung host, a network that drops
// packets): every server process is SIGSTOPped for 6 s while loops of reads and writes run.
// Required: no request hangs with it. Each one fails within the pool's timeout (here
// DATABASE_TIMEOUT_MS=1000, so 3 s on the client, plus at most the 5 s connect timeout for a
// replacement connection) as a clean 503 problem+json; readyz says 503 within its own 2 s; and
// once the database answers again, so does the same service process.
import { afterAll, describe, expect, it } from 'vitest';
import {
  http,
  killAll,
  report,
  sleep,
  startInstance,
  stats,
  startLoad,
  type HttpReply,
  type Sample,
} from './helpers/service.ts';
import { unique } from './helpers/seed.ts';
import { ownPostgres, type OwnPostgres } from './helpers/postgres.ts';

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  killAll();
  for (const c of cleanup) await c().catch(() => {});
});

describe('PostgreSQL frozen under load', () => {
  it('requests fail within the timeout as 503, readyz reports it, and the service recovers', async () => {
    const pg: OwnPostgres = await ownPostgres();
    cleanup.push(async () => {
      pg.thaw();
      await pg.destroy();
    });
    const svc = await startInstance('freeze', {
      DATABASE_URL: pg.url,
      DATABASE_TIMEOUT_MS: '1000',
    });
    const call = (method: string, path: string, o: Parameters<typeof http>[3] = {}) =>
      http(svc.base, method, path, { timeoutMs: 30_000, ...o });

    const signup = await call('POST', '/v2/auth/signup', {
      body: { email: `freeze-${unique()}@example.test`, password: 'a-long-enough-password' },
    });
    expect(signup.status, signup.text).toBe(201);
    const token = signup.json.access_token as string;
    const project = (await call('POST', '/v2/projects', { token, body: { name: 'Freeze' } })).json;

    const requests: Array<[string, () => Promise<HttpReply>]> = [
      ['GET /v2/user', () => call('GET', '/v2/user', { token })],
      ['GET /v2/projects/{id}', () => call('GET', `/v2/projects/${project.id}`, { token })],
      [
        'PATCH /v2/projects/{id}',
        () =>
          call('PATCH', `/v2/projects/${project.id}`, { token, body: { name: `r-${unique()}` } }),
      ],
      [
        'POST /v2/projects',
        () => call('POST', '/v2/projects', { token, body: { name: `p-${unique()}` } }),
      ],
    ];
    const load = startLoad(svc.base, requests, 6, 200);
    const { samples, ready } = load;

    // A fixed time on purpose: 1.5 s of load before the freeze, the service's pool warm.
    await sleep(1500);
    // The window is taken inside the signals: a request may still finish while they are sent.
    pg.freeze();
    const frozenAt = Date.now();
    // A fixed time on purpose: the freeze itself, 6 s, longer than any request may wait.
    await sleep(6000);
    const thawingAt = Date.now();
    pg.thaw();
    const thawedAt = Date.now();
    // A fixed time on purpose: 10 s of load after the thaw, the last 5 s checked below.
    await sleep(10_000);
    await load.stop();

    const all = [...samples, ...ready];
    expect(svc.child.exitCode, 'the service process is still running').toBeNull();
    expect(
      all
        .filter((r) => ![200, 201, 503].includes(r.status))
        .map((r) => `${r.what}: ${r.status} ${r.error ?? ''} ${r.text.slice(0, 200)}`),
    ).toEqual([]);
    for (const r of all.filter((x) => x.status === 503)) {
      expect(r.headers.get('content-type'), r.text).toMatch(/^application\/problem\+json/);
      expect(['database_unavailable', 'database_timeout']).toContain(r.json.code);
    }
    // Nobody waited for the whole freeze.
    const slowest = Math.max(...samples.map((r) => r.ms));
    expect(slowest).toBeLessThan(5500);
    const during = (s: Sample) => s.startedAt >= frozenAt && s.endedAt <= thawingAt;
    expect(samples.filter(during).length).toBeGreaterThan(0);
    expect(
      samples
        .filter(during)
        .filter((s) => s.status !== 503)
        .map(
          (s) =>
            `${s.what}: ${s.status} at +${s.startedAt - frozenAt}..+${s.endedAt - frozenAt} ms`,
        ),
    ).toEqual([]);
    expect(ready.filter(during).length).toBeGreaterThan(0);
    expect(ready.filter(during).every((s) => s.status === 503 && s.ms < 2500)).toBe(true);
    // Recovered: the last 5 s of load all succeeded.
    const tail = samples.filter((s) => s.startedAt >= thawedAt + 5000);
    expect(tail.length).toBeGreaterThan(10);
    expect(
      tail
        .filter((s) => s.status >= 300)
        .map((s) => `${s.what}: ${s.status} ${s.text.slice(0, 120)}`),
    ).toEqual([]);
    const firstOk = samples.find((s) => s.startedAt >= thawedAt && s.status < 300);

    report('postgres frozen for 6 s (DATABASE_TIMEOUT_MS=1000)', {
      requests: samples.length,
      failed_503: samples.filter((s) => s.status === 503).length,
      latency_503_ms: stats(samples.filter((s) => s.status === 503).map((s) => s.ms)),
      slowest_ms: Math.round(slowest),
      readyz_during_freeze_ms: stats(ready.filter(during).map((s) => s.ms)),
      first_success_after_thaw_ms: firstOk!.endedAt - thawedAt,
    });
    expect(await svc.kill('SIGTERM')).toBe(0);
  }, 120_000);
});
