// Rate-limit counters are keyed by account and IP, so without pruning their rows pile up
// forever. The minute sweep deletes the windows that have ended, by the
// service clock, and keeps every live one, whatever its length.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';

const ADMIN = 'admin-token-for-tests';
let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

async function login(email: string, remoteAddress: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v2/auth/login',
    remoteAddress,
    payload: { email, password: 'wrong-password' },
  });
  expect(res.statusCode, res.body).toBe(401);
}
async function signup(remoteAddress: string) {
  const payload = {
    email: `new.${Math.random().toString(36).slice(2)}@example.test`,
    password: 'long-enough-password',
  };
  const res = await t.app.inject({
    method: 'POST',
    url: '/v2/auth/signup',
    remoteAddress,
    payload,
  });
  expect(res.statusCode, res.body).toBe(201);
}
const keys = async () =>
  (await t.db.selectFrom('rate_limits').select('key').orderBy('key').execute()).map((r) => r.key);
const advance = async (seconds: number) =>
  expect(
    (await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } })).status,
  ).toBe(200);

describe('pruning rate-limit windows', () => {
  it('deletes ended windows and keeps live ones, each by its own length', async () => {
    const u = await newUser(t, 'pruned');
    await login(u.email, '192.0.2.1'); // 15-minute windows: per IP and per account+IP
    await login('nobody@example.test', '192.0.2.2');
    await signup('192.0.2.3'); // a one-hour window
    const all = [
      'login:addr:nobody@example.test:ip:192.0.2.2',
      `login:addr:${u.email}:ip:192.0.2.1`,
      'login:ip:192.0.2.1',
      'login:ip:192.0.2.2',
      'signup:ip:192.0.2.3',
    ].sort();
    expect(await keys()).toEqual(all);

    // Ten minutes on, a new address starts its own window; nothing has ended yet.
    await advance(10 * 60);
    await login(u.email, '192.0.2.4');
    expect(await keys()).toHaveLength(all.length + 2);

    // Fifteen minutes after the first hits (the clock advance runs the sweep): those windows
    // are gone; the later login's windows and the hour-long sign-up window stay.
    await advance(5 * 60 + 1);
    expect(await keys()).toEqual(
      [`login:addr:${u.email}:ip:192.0.2.4`, 'login:ip:192.0.2.4', 'signup:ip:192.0.2.3'].sort(),
    );

    // A window that ended but was not swept yet rolls over when hit, and is live again: it
    // survives the next sweep. (The clock moves here without running the sweep.)
    await t.clock.advance(15 * 60);
    await login(u.email, '192.0.2.4');
    await t.services.timeRules.runDue();
    expect(await keys()).toEqual(
      [`login:addr:${u.email}:ip:192.0.2.4`, 'login:ip:192.0.2.4', 'signup:ip:192.0.2.3'].sort(),
    );
    const row = await t.db
      .selectFrom('rate_limits')
      .selectAll()
      .where('key', '=', 'login:ip:192.0.2.4')
      .executeTakeFirstOrThrow();
    expect(row.count).toBe(1);
    expect(row.expires_at.getTime() - row.window_start.getTime()).toBe(15 * 60 * 1000);

    await advance(60 * 60);
    expect(await keys()).toEqual([]);
  });
});
