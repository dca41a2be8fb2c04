// Issue 12, item 16: the log is for people. Agents' syncs and health probes leave no access line
// at info while they succeed; an early readiness probe is no warning; an e-mail kept without
// SMTP reads as lines. Each point is read from the real application's log, written to memory.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from './helpers/app.ts';
import { invitationToken, newTeam, newUser } from './helpers/factories.ts';
import { waitFor } from './helpers/wait.ts';
import { buildApp, type App } from '../src/app.ts';

interface Line {
  level: number;
  msg: string;
  url?: string;
  status?: number;
  [k: string]: unknown;
}

function memoryLogger(level: 'info' | 'debug') {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _e, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, logger: pino({ level }, sink) };
}

let t: TestApp;
let ready = true;
const info = memoryLogger('info');
const debug = memoryLogger('debug');
let atInfo: App;
let atDebug: App;
beforeAll(async () => {
  t = await testApp();
  // The real application on the same database, twice: with the default level and with debug.
  atInfo = await buildApp(t.core, t.services, { logger: info.logger, isReady: () => ready });
  atDebug = await buildApp(t.core, t.services, { logger: debug.logger, isReady: () => ready });
});
afterAll(async () => {
  await atInfo?.close();
  await atDebug?.close();
  await t?.close();
});

const access = (lines: Line[], url: string) =>
  lines.filter((l) => l.msg === 'request' && l.url?.startsWith(url));

describe('access lines (issue 12, item 16)', () => {
  it("an agent's successful syncs, long polls included, are logged at debug, not at info", async () => {
    const agent = await t.post('/v2/admin/agents', {
      token: 'admin-token-for-tests',
      body: { name: 'quiet' },
    });
    expect(agent.status, agent.text).toBe(201);
    for (const app of [atInfo, atDebug]) {
      for (const url of ['/v2/agent/sync', '/v2/agent/sync?wait=1']) {
        const r = await app.inject({
          method: 'POST',
          url,
          headers: { authorization: `Bearer ${agent.json.token}` },
          payload: { events: [] },
        });
        expect(r.statusCode, r.body).toBe(200);
      }
    }
    expect(access(info.lines, '/v2/agent/sync')).toEqual([]);
    const lines = access(debug.lines, '/v2/agent/sync');
    expect(lines.map((l) => [l.level, l.url, l.status])).toEqual([
      [20, '/v2/agent/sync', 200],
      [20, '/v2/agent/sync?wait=1', 200],
    ]);
  });

  it('a failed sync keeps its access line at info', async () => {
    const r = await atInfo.inject({
      method: 'POST',
      url: '/v2/agent/sync',
      headers: { authorization: 'Bearer fpa_not-a-token' },
      payload: { events: [] },
    });
    expect(r.statusCode).toBe(401);
    expect(access(info.lines, '/v2/agent/sync').map((l) => [l.level, l.status])).toEqual([
      [30, 401],
    ]);
  });

  it('health and readiness probes leave no access line at info', async () => {
    for (const url of ['/healthz', '/readyz'])
      expect((await atInfo.inject({ url })).statusCode).toBe(200);
    expect([...access(info.lines, '/healthz'), ...access(info.lines, '/readyz')]).toEqual([]);
  });

  it('other requests keep their access line at info', async () => {
    expect((await atInfo.inject({ url: '/v2/user' })).statusCode).toBe(401);
    expect(access(info.lines, '/v2/user').map((l) => [l.level, l.status])).toEqual([[30, 401]]);
  });
});

describe('a readiness probe before start-up is done (issue 12, item 16)', () => {
  it('answers 503 not_ready and logs no warning', async () => {
    ready = false;
    try {
      info.lines.length = 0;
      const r = await atInfo.inject({ url: '/readyz' });
      expect(r.statusCode).toBe(503);
      expect(JSON.parse(r.body)).toMatchObject({ status: 503, code: 'not_ready' });
      expect(r.headers['retry-after']).toBe('5');
      expect(info.lines.filter((l) => l.level >= 40)).toEqual([]);
    } finally {
      ready = true;
    }
  });
});

describe('an e-mail kept without SMTP_URL (issue 12, item 16)', () => {
  const mail = memoryLogger('info');
  let m: TestApp;
  beforeAll(async () => {
    m = await testApp({ worker: true, logger: mail.logger });
  });
  afterAll(async () => {
    await m?.close();
  });

  it('is logged with its text as a list of lines, the link on one of its own', async () => {
    const ann = await newUser(m, 'ann');
    const team = await newTeam(m, ann);
    const guest = `guest.${Date.now()}@example.test`;
    expect(
      (
        await m.post(`/v2/teams/${team.id}/invitations`, {
          token: ann.token,
          body: { email: guest, role: 'viewer' },
        })
      ).status,
    ).toBe(201);
    const kept = await waitFor(
      'the e-mail in the log',
      () => mail.lines.find((l) => l.to === guest),
      {
        timeoutMs: 15_000,
      },
    );
    expect(kept, 'the e-mail in the log').toBeDefined();
    expect(kept!.msg).toBe('e-mail kept, not sent (no SMTP_URL)');
    expect(kept!.msg).not.toContain('\n');
    const text = kept!.text as string[];
    expect(Array.isArray(text)).toBe(true);
    expect(text.length).toBeGreaterThan(3);
    for (const line of text) expect(line).not.toContain('\n');
    const link = `http://frameplane.test/invitations/${encodeURIComponent(await invitationToken(m, guest))}`;
    expect(text).toContain(link);
  });
});
