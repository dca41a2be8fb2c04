// Issue 12, item 1: an Idempotency-Key record never holds a secret. Routes whose success answer
// carries a secret shown once declare it (config.secretAnswer); their record keeps no body, and
// a replay is 409 idempotent_secret_not_replayed instead of showing the secret again.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, FACTORY_PASSWORD, newProject, newUser } from '../helpers/factories.ts';
import { ADMIN, cloudWorld, framePath, newFrame } from '../helpers/frames.ts';
import { secretAnswerRoutes } from '../../src/http/idempotency.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const SECRET = /(?:fp|fpa|whsec|inv)_[A-Za-z0-9_-]{20,}/;

async function rows() {
  return t.db.selectFrom('idempotency_keys').selectAll().execute();
}

/** Sends the same request twice with one key; checks the record and the replay. */
async function twice(
  path: string,
  o: { token?: string; body?: unknown },
  secretOf: (json: any) => string,
) {
  const headers = { 'idempotency-key': `k-${Math.random().toString(36).slice(2)}` };
  const first = await t.post(path, { ...o, headers });
  expect(first.status, first.text).toBeLessThan(300);
  const secret = secretOf(first.json);
  expect(secret).toMatch(SECRET);
  const record = (await rows()).find((r) => r.key === headers['idempotency-key'])!;
  expect(record.status).toBe(first.status);
  expect(JSON.stringify(record)).not.toContain(secret);
  // The request's hash is base64url and may hold "fp_" followed by 20 letters by chance.
  const { request_hash, ...kept } = record;
  expect(request_hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(JSON.stringify(kept)).not.toMatch(SECRET);
  const again = await t.post(path, { ...o, headers });
  expectProblem(again, 409, 'idempotent_secret_not_replayed');
  expect(again.text).not.toContain(secret);
  expect(again.json.detail).toContain(`succeeded (${first.status})`);
  expect(again.json.detail).toContain('shown once');
  return { first, again };
}

describe('Idempotency-Key and secrets (issue 12, item 1)', () => {
  it('keeps no secret of sign-up, login, tokens, webhook rotation or agents, and refuses to replay them', async () => {
    const ann = await newUser(t, 'ann');
    const project = await newProject(t, ann);
    const email = `new.${Date.now()}@example.test`;
    await twice(
      '/v2/auth/signup',
      { body: { email, password: 'a-long-enough-password' } },
      (j) => j.access_token,
    );
    const { again } = await twice(
      '/v2/auth/login',
      { body: { email: ann.email, password: FACTORY_PASSWORD } },
      (j) => j.access_token,
    );
    expect(again.json.detail).toContain('new Idempotency-Key');
    await twice('/v2/user/tokens', { token: ann.token, body: { name: 'ci' } }, (j) => j.token);
    await twice(`/v2/projects/${project.id}/webhook`, { token: ann.token }, (j) => j.secret);
    await twice(
      `/v2/projects/${project.id}/agents`,
      { token: ann.token, body: { name: 'edge-1' } },
      (j) => j.token,
    );
    await twice(
      '/v2/admin/agents',
      { token: ADMIN, body: { name: `cloud-${Date.now()}` } },
      (j) => j.token,
    );
    // Nothing secret-shaped is anywhere in the table.
    expect(JSON.stringify(await rows())).not.toMatch(SECRET);
  });

  it('keeps no env values of an agent sync either', async () => {
    const u = await testApp(); // its only cloud agent is the one every cloud frame lands on
    try {
      const w = await cloudWorld(u);
      const frame = await newFrame(u, w.ann, w.project.id, w.space);
      const value = 'postgres://app:hunter2-sync-secret@db/app';
      const put = await u.put(`${framePath(frame)}/env`, {
        token: w.ann.token,
        body: { vars: { DATABASE_URL: value } },
      });
      expect(put.status, put.text).toBeLessThan(300);
      const deploy = await u.post(`${framePath(frame)}/deploy`, { token: w.ann.token, body: {} });
      expect(deploy.status, deploy.text).toBeLessThan(300);
      const headers = { 'idempotency-key': 'sync-1' };
      const first = await u.post('/v2/agent/sync', { token: w.agent.token, body: {}, headers });
      expect(first.status, first.text).toBe(200);
      expect(first.text).toContain(value);
      const stored = await u.db.selectFrom('idempotency_keys').selectAll().execute();
      expect(stored.map((r) => r.key)).toContain('sync-1');
      expect(JSON.stringify(stored)).not.toContain('hunter2-sync-secret');
      expectProblem(
        await u.post('/v2/agent/sync', { token: w.agent.token, body: {}, headers }),
        409,
        'idempotent_secret_not_replayed',
      );
    } finally {
      await u.close();
    }
  });

  it('still replays answers without a secret, and the errors of secret-bearing routes', async () => {
    const ann = await newUser(t, 'ann');
    const headers = { 'idempotency-key': 'wrong-password-1' };
    const body = { email: ann.email, password: 'not-the-password' };
    const first = await t.post('/v2/auth/login', { body, headers });
    const again = await t.post('/v2/auth/login', { body, headers });
    expect(again.status).toBe(first.status);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.code).toBe(first.json.code);
    const p1 = await t.post('/v2/projects', {
      token: ann.token,
      body: { name: 'plain' },
      headers: { 'idempotency-key': 'plain-1' },
    });
    const p2 = await t.post('/v2/projects', {
      token: ann.token,
      body: { name: 'plain' },
      headers: { 'idempotency-key': 'plain-1' },
    });
    expect(p2.json).toEqual(p1.json);
    expect(p2.headers['idempotent-replayed']).toBe('true');
  });

  it('keeps the request hash keyed, so a login body (with its password) cannot be guessed from it', async () => {
    const ann = await newUser(t, 'ann');
    const raw = JSON.stringify({ email: ann.email, password: FACTORY_PASSWORD });
    await t.post('/v2/auth/login', {
      raw,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'hash-1' },
    });
    const record = (await rows()).find((r) => r.key === 'hash-1')!;
    const plain = createHash('sha256').update(`POST /v2/auth/login\n${raw}`).digest('base64url');
    expect(record.request_hash).not.toBe(plain);
    expect(record.request_hash).toBe(t.core.sealer.digest(`POST /v2/auth/login\n${raw}`));
  });

  it('declares every POST whose success answer has a token or secret field, or is described as shown once', async () => {
    const doc = (await t.get('/v2/openapi.json')).json;
    const resolve = (s: any): any =>
      s?.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()]) : s;
    const secretField = (s: any, depth = 0): boolean => {
      s = resolve(s);
      if (!s || depth > 6) return false;
      if (typeof s.description === 'string' && /shown once/i.test(s.description)) return true;
      for (const [name, p] of Object.entries<any>(s.properties ?? {})) {
        // A token or secret, or env values (sealed at rest everywhere else).
        if (/(^|_)(token|secret)$/i.test(name) || name === 'env' || secretField(p, depth + 1))
          return true;
      }
      return [s.items, ...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].some(
        (x) => x && secretField(x, depth + 1),
      );
    };
    const found: string[] = [];
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      const op = ops.post;
      if (!op) continue;
      const ok = Object.entries<any>(op.responses ?? {}).filter(([code]) => code.startsWith('2'));
      const bearing =
        /shown once/i.test(op.summary ?? '') ||
        ok.some(([, r]) => Object.values<any>(r.content ?? {}).some((c) => secretField(c.schema)));
      if (bearing) found.push(`POST ${path.replace(/\{(\w+)\}/g, ':$1')}`);
    }
    expect(found).toEqual(
      expect.arrayContaining([
        'POST /v2/auth/signup',
        'POST /v2/auth/login',
        'POST /v2/user/tokens',
        'POST /v2/projects/:project_id/webhook',
        'POST /v2/projects/:project_id/agents',
        'POST /v2/admin/agents',
        'POST /v2/agent/sync',
      ]),
    );
    expect(secretAnswerRoutes(t.app).filter((r) => r.startsWith('POST '))).toEqual(found.sort());
  });
});
