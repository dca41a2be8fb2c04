// Issue 12 item 3: failed logins are counted before the password is verified, atomically, so no
// burst gets more than the limit of guesses; the per-account throttle is per client IP, so an
// attacker's address is stopped without locking the owner out from another source.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, FACTORY_PASSWORD, newUser } from '../helpers/factories.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    env: { RATE_FAILED_LOGINS_PER_ADDRESS: '20', RATE_FAILED_LOGINS_PER_IP: '100' },
  });
});
afterAll(async () => {
  await t.close();
});

async function login(email: string, password: string, remoteAddress: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v2/auth/login',
    remoteAddress,
    payload: { email, password },
  });
  let json: any = null;
  try {
    json = JSON.parse(res.body);
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, json, text: res.body, headers: res.headers };
}

const ATTACKER = '203.0.113.7';
const OWNER = '198.51.100.9';

describe('login throttling', () => {
  it('60 parallel wrong passwords against a limit of 20: exactly 20 are verified, the rest are 429', async () => {
    const u = await newUser(t, 'owner');
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => login(u.email, `wrong-password-${i}`, ATTACKER)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);

    // The owner, from elsewhere, is not locked out...
    const owner = await login(u.email, FACTORY_PASSWORD, OWNER);
    expect(owner.status, owner.text).toBe(200);
    expect(owner.json.access_token).toMatch(/^fp_/);

    // ...while the attacker's address stays blocked, even with the right password.
    const again = await login(u.email, FACTORY_PASSWORD, ATTACKER);
    expectProblem(again, 429, 'rate_limited');
    const retry = Number(again.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(15 * 60);

    // The window is fixed: refused attempts do not lengthen it.
    await t.post('/v2/admin/clock', {
      token: 'admin-token-for-tests',
      body: { advance_seconds: 15 * 60 + 1 },
    });
    expect((await login(u.email, FACTORY_PASSWORD, ATTACKER)).status).toBe(200);
  });

  it('a correct login clears its own account+IP counter and costs nothing against the IP', async () => {
    const u = await newUser(t, 'forgetful');
    const ip = '192.0.2.44';
    for (let i = 0; i < 19; i++)
      expect((await login(u.email, 'wrong-password', ip)).status).toBe(401);
    expect((await login(u.email, FACTORY_PASSWORD, ip)).status).toBe(200);
    for (let i = 0; i < 19; i++)
      expect((await login(u.email, 'wrong-password', ip)).status).toBe(401);
    expect((await login(u.email, FACTORY_PASSWORD, ip)).status).toBe(200);
    const ipCount = await t.db
      .selectFrom('rate_limits')
      .select('count')
      .where('key', '=', `login:ip:${ip}`)
      .executeTakeFirstOrThrow();
    expect(ipCount.count).toBe(38);
  });

  it('failed logins per IP, across accounts, stop one address and no other', async () => {
    const ip = '192.0.2.99';
    const users = await Promise.all(Array.from({ length: 10 }, (_, i) => newUser(t, `spray${i}`)));
    // 100 wrong passwords spread over 10 accounts (10 each, under the per-account limit), in parallel.
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) => login(at(users, i % 10).email, 'wrong-password', ip)),
    );
    expect(answers.filter((a) => a.status === 401)).toHaveLength(100);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(20);
    const blocked = await login(at(users, 0).email, FACTORY_PASSWORD, ip);
    expectProblem(blocked, 429, 'rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login(at(users, 0).email, FACTORY_PASSWORD, '192.0.2.100')).status).toBe(200);
  });
});
