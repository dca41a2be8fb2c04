// The edges' certificates in the database (certificates/): which hosts want one, one order per
// host at a time under concurrency, the back-off after a failure, what an agent is told and may
// read, and the certificates of hosts no frame holds any more. The ACME server itself is Pebble,
// in test/edge/acme.test.ts; here the orders' results are stored as the issuer stores them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  certificateRow,
  dropUnwanted,
  dueHostnames,
  lease,
  recordFailure,
  saveChallenge,
  storeIssued,
} from '../../src/certificates/certificates-dal.ts';
import { transaction } from '../../src/db/database.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';

const APPS = 'apps.example.test';
const ACME = { ACME_DIRECTORY_URL: 'https://acme.example.test/dir', APPS_DOMAIN: APPS };
let t: TestApp;
let ann: TestUser;
let project: { id: string };
let space: string;
let tls: { id: string; token: string };
let plain: { id: string; token: string };

beforeAll(async () => {
  t = await testApp({ env: ACME });
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
  // One cloud agent with HTTPS on its edge, one with HTTP only.
  tls = await cloudAgent(t, 'with-tls');
  await sync(t, tls.token, { edge: { http_port: 80, https_port: 443 } });
  plain = await cloudAgent(t, 'http-only');
  await sync(t, plain.token, { edge: { http_port: 80, https_port: null } });
});
afterAll(async () => {
  await t.close();
});

/** A frame placed on `agent` (cloud frames go to the least loaded agent: move it there). */
async function frameOn(agent: { id: string }, name: string) {
  const f = await newFrame(t, ann, project.id, space, { name });
  await t.db.updateTable('frames').set({ agent_id: agent.id }).where('id', '=', f.id).execute();
  return f as { id: string; hostname: string; project_id: string; space_id: string };
}

const issued = (fingerprint: string) => ({
  certificate: `CHAIN ${fingerprint}`,
  privateKeySealed: t.core.sealer.seal(`KEY ${fingerprint}`),
  fingerprint,
  notBefore: new Date('2026-11-28T00:00:00Z'),
  notAfter: new Date('2027-02-26T00:00:00Z'),
  renewAt: new Date('2027-01-27T00:00:00Z'),
});
const now = () => t.clock.now();
const later = (ms: number) => new Date(now().getTime() + ms);

describe('which hosts want a certificate', () => {
  it('frames on an edge with HTTPS and their verified domains; nothing else', async () => {
    const a = await frameOn(tls, 'alpha');
    const b = await frameOn(plain, 'beta');
    const pending = await t.post(`${framePath(a)}/domains`, {
      token: ann.token,
      body: { hostname: 'pending.example.org' },
    });
    expect(pending.status, pending.text).toBe(201);
    const shop = await t.post(`${framePath(a)}/domains`, {
      token: ann.token,
      body: { hostname: 'shop.example.org' },
    });
    t.dns.add(shop.json.verification.name, shop.json.verification.value);
    const v = await t.post(`${framePath(a)}/domains/${shop.json.id}/verify`, { token: ann.token });
    expect(v.status, v.text).toBe(200);

    const due = await dueHostnames(t.db, APPS, now(), 1000);
    expect(due).toContain(a.hostname);
    expect(due).toContain('shop.example.org');
    expect(due).not.toContain(b.hostname);
    expect(due).not.toContain('pending.example.org');
  });
});

describe('one order per host', () => {
  it('of 20 concurrent leases of one host, one wins', async () => {
    const f = await frameOn(tls, 'racy');
    const n = now();
    const won = await Promise.all(
      Array.from({ length: 20 }, () => lease(t.db, f.hostname, n, later(600_000))),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    // Held: not due, and no other lease until it ends.
    expect(await dueHostnames(t.db, APPS, n, 1000)).not.toContain(f.hostname);
    expect(await lease(t.db, f.hostname, later(599_000), later(1_200_000))).toBe(false);
    expect(await lease(t.db, f.hostname, later(600_000), later(1_200_000))).toBe(true);
  });

  it('a failure backs the host off and keeps the error; a success resets it', async () => {
    const f = await frameOn(tls, 'flaky');
    expect(await lease(t.db, f.hostname, now(), later(600_000))).toBe(true);
    const backOff = later(60_000);
    const retry = await transaction(t.db, (trx) =>
      recordFailure(trx, f.hostname, 'connection refused', () => backOff),
    );
    expect(retry).toEqual({ failures: 1, at: backOff });
    expect(await certificateRow(t.db, f.hostname)).toMatchObject({
      failures: 1,
      last_error: 'connection refused',
      leased_until: null,
    });
    expect(await dueHostnames(t.db, APPS, now(), 1000)).not.toContain(f.hostname);
    expect(await dueHostnames(t.db, APPS, backOff, 1000)).toContain(f.hostname);
    expect(await lease(t.db, f.hostname, now(), later(600_000))).toBe(false);

    expect(await lease(t.db, f.hostname, backOff, later(600_000))).toBe(true);
    await storeIssued(t.db, f.hostname, issued('f1'), APPS);
    expect(await certificateRow(t.db, f.hostname)).toMatchObject({
      failures: 0,
      last_error: null,
      fingerprint: 'f1',
    });
    // Due again at its renewal time, not before.
    const row = await certificateRow(t.db, f.hostname);
    expect(row?.attempt_at).toEqual(issued('f1').renewAt);
    expect(await dueHostnames(t.db, APPS, issued('f1').renewAt, 1000)).toContain(f.hostname);
  });
});

describe('what an agent is told and may read', () => {
  it('names each certificate by fingerprint; gives its key to the agent serving the host only', async () => {
    const f = await frameOn(tls, 'served');
    const before = (await sync(t, tls.token)) as any;
    const told = () => before.frames.find((x: any) => x.frame_id === f.id);
    expect(told().certificates).toEqual([]);

    await lease(t.db, f.hostname, now(), later(600_000));
    await storeIssued(t.db, f.hostname, issued('abc123'), APPS);
    const after = (await sync(t, tls.token, { known_state: before.state })) as any;
    expect(after.state).not.toBe(before.state);
    expect(after.frames.find((x: any) => x.frame_id === f.id).certificates).toEqual([
      { hostname: f.hostname, fingerprint: 'abc123' },
    ]);

    // The key is sealed at rest, and opened for the agent that serves the host.
    const row = await certificateRow(t.db, f.hostname);
    expect(row?.private_key_sealed).not.toContain('KEY abc123');
    const read = await t.get(`/v2/agent/certificates/${f.hostname.toUpperCase()}`, {
      token: tls.token,
    });
    expect(read.status, read.text).toBe(200);
    expect(read.json).toEqual({
      hostname: f.hostname,
      certificate: 'CHAIN abc123',
      private_key: 'KEY abc123',
      fingerprint: 'abc123',
      not_after: '2027-02-26T00:00:00.000Z',
    });
    // Another agent, a user, nobody: it does not exist for them.
    const other = await t.get(`/v2/agent/certificates/${f.hostname}`, { token: plain.token });
    expect(other.status).toBe(404);
    expect((await t.get(`/v2/agent/certificates/${f.hostname}`, { token: ann.token })).status).toBe(
      401,
    );
    expect((await t.get(`/v2/agent/certificates/${f.hostname}`)).status).toBe(401);
  });

  it('answers a challenge to the agent serving its host, and 404 to any other', async () => {
    const f = await frameOn(tls, 'challenged');
    await saveChallenge(t.db, {
      token: 'tok_abc-123',
      hostname: f.hostname,
      keyAuthorization: 'tok_abc-123.thumbprint',
      now: now(),
    });
    const mine = await t.get('/v2/agent/acme-challenges/tok_abc-123', { token: tls.token });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.json).toEqual({ key_authorization: 'tok_abc-123.thumbprint' });
    expect(
      (await t.get('/v2/agent/acme-challenges/tok_abc-123', { token: plain.token })).status,
    ).toBe(404);
    expect((await t.get('/v2/agent/acme-challenges/unknown', { token: tls.token })).status).toBe(
      404,
    );
    // Not a token at all: as for any malformed id in a path, no such thing.
    expect((await t.get('/v2/agent/acme-challenges/a.b', { token: tls.token })).status).toBe(404);
  });
});

describe('hosts no frame holds any more', () => {
  it('lose their certificate with the frame', async () => {
    const f = await frameOn(tls, 'doomed');
    await lease(t.db, f.hostname, now(), later(600_000));
    await storeIssued(t.db, f.hostname, issued('gone'), APPS);
    expect(await dropUnwanted(t.db, APPS)).not.toContain(f.hostname);
    const del = await t.del(framePath(f), { token: ann.token });
    expect(del.status, del.text).toBe(200);
    expect(await dropUnwanted(t.db, APPS)).toContain(f.hostname);
    expect(await certificateRow(t.db, f.hostname)).toBeUndefined();
  });
});

describe('the frame url', () => {
  it('is https on an edge with HTTPS when the service has ACME', async () => {
    const a = await frameOn(tls, 'secure');
    const b = await frameOn(plain, 'clear');
    const read = async (f: typeof a) => (await t.get(framePath(f), { token: ann.token })).json;
    expect((await read(a)).url).toBe(`https://${a.hostname}`);
    expect((await read(b)).url).toBe(`http://${b.hostname}`);
  });

  it('stays http without ACME, whatever the agent says', async () => {
    const u = await testApp({ env: { APPS_DOMAIN: APPS } });
    try {
      const user = await newUser(u, 'ann');
      const p = await newProject(u, user);
      const s = await defaultSpace(u, user, p.id);
      const agent = await cloudAgent(u);
      await sync(u, agent.token, { edge: { http_port: 80, https_port: 443 } });
      const f = await newFrame(u, user, p.id, s);
      expect((await u.get(framePath(f), { token: user.token })).json.url).toBe(
        `http://${f.hostname}`,
      );
    } finally {
      await u.close();
    }
  });
});
