// Signed tokens (src/identity/token-format.ts) through HTTP: once an instance knows the
// revoked tokens (revocations.ts), a signed token's first request does not look it up, and
// everything a lookup refused is still refused: a revocation made before the instance started
// or on another instance, expiry by the service clock, a changed character. A token this key
// did not sign (a random one, or one signed under a key since rotated) is looked up as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { testApp, testAppOn, type TestApp } from '../helpers/app.ts';
import { expectProblem, newUser } from '../helpers/factories.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
let admin: pg.Client;
const operator = { token: 'admin-token-for-tests' };

const known = (app: TestApp) => waitFor('revocations', () => app.services.revocations.known());

/** A personal token of a new user, made through the API: signed, as users get them. */
async function personalToken(app: TestApp, body: object = { name: 'cli' }) {
  const u = await newUser(app, 'signed');
  const r = await app.post('/v2/user/tokens', { token: u.token, body });
  expect(r.status, r.text).toBe(201);
  return { user: u, id: r.json.id as string, token: r.json.token as string };
}

/** Settles within `ms`, or is still waiting. */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then(() => 'settled'), new Promise((r) => setTimeout(() => r('waiting'), ms))]);

beforeAll(async () => {
  t = await testApp();
  admin = new pg.Client({ connectionString: t.url });
  await admin.connect();
  await known(t);
});
afterAll(async () => {
  await admin.end();
  await t.close();
});

describe('signed tokens', () => {
  it('are known on their first request without reading access_tokens; random ones are read', async () => {
    const signed = await personalToken(t);
    const random = await newUser(t, 'random');
    await admin.query(
      `update access_tokens set token_hash = sha256(convert_to($1, 'utf8'))
      where id = (select id from access_tokens where user_id = $2 limit 1)`,
      [`fp_${'r'.repeat(43)}`, random.id],
    );
    const other = await testAppOn(t.url);
    try {
      await known(other);
      await admin.query('begin');
      // Nothing can read access_tokens until this transaction ends.
      await admin.query('lock table access_tokens in access exclusive mode');
      const bySigned = other.get('/v2/user', { token: signed.token });
      const byRandom = other.get('/v2/user', { token: `fp_${'r'.repeat(43)}` });
      expect(await within(bySigned, 2000)).toBe('settled');
      expect((await bySigned).json.id).toBe(signed.user.id);
      expect(await within(byRandom, 300)).toBe('waiting');
      await admin.query('rollback');
      expect((await byRandom).json.id).toBe(random.id);
    } finally {
      await admin.query('rollback').catch(() => {});
      await other.close();
    }
  });

  it('revoked before an instance started are refused by it', async () => {
    const p = await personalToken(t);
    expect((await t.del(`/v2/user/tokens/${p.id}`, { token: p.user.token })).status).toBe(204);
    const other = await testAppOn(t.url);
    try {
      await known(other);
      expectProblem(await other.get('/v2/user', { token: p.token }), 401);
    } finally {
      await other.close();
    }
  });

  it('revoked on another instance are refused on a first request once it hears', async () => {
    const other = await testAppOn(t.url);
    try {
      await known(other);
      const p = await personalToken(t);
      expect((await t.del(`/v2/user/tokens/${p.id}`, { token: p.user.token })).status).toBe(204);
      await waitFor('the NOTIFY', () => other.services.revocations.revoked(p.id) === true);
      expectProblem(await other.get('/v2/user', { token: p.token }), 401);
    } finally {
      await other.close();
    }
  });

  it('expire by the service clock without a lookup', async () => {
    const p = await personalToken(t, { name: 'short', expires_in_days: 1 });
    expect((await t.get('/v2/user', { token: p.token })).status).toBe(200);
    await t.post('/v2/admin/clock', { ...operator, body: { advance_seconds: 86400 + 1 } });
    const other = await testAppOn(t.url);
    try {
      await known(other);
      expectProblem(await t.get('/v2/user', { token: p.token }), 401);
      expectProblem(await other.get('/v2/user', { token: p.token }), 401);
    } finally {
      await other.close();
    }
  });

  it('are refused with any character changed, and kept working across a key rotation', async () => {
    const p = await personalToken(t);
    const changed = p.token.slice(0, 20) + (p.token[20] === 'A' ? 'B' : 'A') + p.token.slice(21);
    expectProblem(await t.get('/v2/user', { token: changed }), 401);
    const rotated = await testAppOn(t.url, { secretKey: 'a key rotated since' });
    try {
      await known(rotated);
      // Not signed under this key: looked up by its hash, as any token issued before.
      expect((await rotated.get('/v2/user', { token: p.token })).json.id).toBe(p.user.id);
      expectProblem(await rotated.get('/v2/user', { token: changed }), 401);
    } finally {
      await rotated.close();
    }
  });
});
