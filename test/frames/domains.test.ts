// Domain ownership: a POST is a pending claim with a DNS TXT challenge; only
// a verified claim is attached to its frame and routed. Claiming first blocks nobody, a POST
// reveals nothing about others' claims, and when two frames verify one hostname at once
// exactly one wins. DNS answers come from the test's table (helpers/dns.ts).
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';
import { claimDomain, publish, verifiedDomain, verify } from '../helpers/domains.ts';
import { checkChallenge, systemTxtResolver } from '../../src/domains/domain-verification.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
let agent: { id: string; token: string };
let alice: TestUser, mallory: TestUser;
let aliceProject: { id: string }, malloryProject: { id: string };

beforeAll(async () => {
  t = await testApp();
  agent = await cloudAgent(t, 'cloud-domains');
  [alice, mallory] = await Promise.all([newUser(t, 'alice'), newUser(t, 'mallory')]);
  aliceProject = await newProject(t, alice, 'Alice');
  malloryProject = await newProject(t, mallory, 'Mallory');
});
afterAll(async () => {
  await t?.close();
});

let seq = 0;
const frameOf = async (user: TestUser, project: { id: string }) =>
  newFrame(t, user, project.id, await defaultSpace(t, user, project.id), { name: `web-${++seq}` });
const host = (name: string) => `${name}-${++seq}.alice.test`;
const claimsOf = (hostname: string) =>
  t.db.selectFrom('domains').selectAll().where('hostname', '=', hostname).orderBy('id').execute();
const listOf = async (user: TestUser, f: any) =>
  (await t.get(`${framePath(f)}/domains`, { token: user.token })).json.data;
/** POST …/domains as `user`, whatever the answer. */
const post = (user: TestUser, f: any, hostname: string) =>
  t.post(`${framePath(f)}/domains`, { token: user.token, body: { hostname } });
const del = (user: TestUser, f: any, domainId: string) =>
  t.del(`${framePath(f)}/domains/${domainId}`, { token: user.token });
const routedTo = async (frameId: string) =>
  (await sync(t, agent.token)).frames.find((f) => f.frame_id === frameId)!.domains;

describe('a claim and its verification', () => {
  it('a POST is pending with its TXT challenge; verify attaches it given the record', async () => {
    const f = await frameOf(alice, aliceProject);
    const hostname = host('www');
    const claim = await claimDomain(t, alice.token, f, hostname);
    expect(claim).toEqual({
      id: expect.stringMatching(/^dom_/),
      frame_id: f.id,
      hostname,
      // Where the domain's CNAME points: the frame's own hostname (CONTRACT 5b).
      target: f.hostname,
      created_at: expect.any(String),
      verified: false,
      verified_at: null,
      verification: {
        type: 'TXT',
        name: `_frameplane-challenge.${hostname}`,
        value: expect.stringMatching(/^frameplane-verify=[0-9a-f]{32}$/),
      },
    });

    // No record: a clear 422 naming the record expected, and nothing written.
    const missing = await verify(t, alice.token, f, claim.id);
    expectProblem(missing, 422, 'domain_verification_failed');
    expect(missing.json.detail).toContain(`_frameplane-challenge.${hostname}`);
    expect(missing.json.detail).toContain(claim.verification.value);
    expect(missing.json.detail).toContain('found no TXT record');
    expect(missing.json.errors).toEqual([{ path: 'verification', message: missing.json.detail }]);

    // Wrong records: the 422 lists what was found.
    t.dns.add(claim.verification.name, 'v=spf1 -all');
    t.dns.add(claim.verification.name, 'frameplane-verify=0123456789abcdef0123456789abcdef');
    const wrong = await verify(t, alice.token, f, claim.id);
    expectProblem(wrong, 422, 'domain_verification_failed');
    expect(wrong.json.detail).toContain('"v=spf1 -all"');
    expect(wrong.json.detail).toContain('"frameplane-verify=0123456789abcdef0123456789abcdef"');
    expect(at(await claimsOf(hostname), 0).verified_at).toBeNull();
    expect(await routedTo(f.id)).toEqual([]);

    // The right record among others: verified.
    publish(t, claim);
    const ok = await verify(t, alice.token, f, claim.id);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toEqual({ ...claim, verified: true, verified_at: expect.any(String) });
    expect(await listOf(alice, f)).toEqual([ok.json]);

    // Verifying again answers the same, without another look-up.
    const lookups = t.dns.lookups.length;
    t.dns.clear(claim.verification.name);
    expect((await verify(t, alice.token, f, claim.id)).json).toEqual(ok.json);
    expect(t.dns.lookups.length).toBe(lookups);

    const events = await t.db
      .selectFrom('frame_events')
      .select('type')
      .where('frame_id', '=', f.id)
      .where('type', 'like', 'domain_%')
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.type)).toEqual(['domain_added', 'domain_verified']);
  });

  it("a failing DNS server is the zone owner's 422; an unfinished look-up is 503", async () => {
    const f = await frameOf(alice, aliceProject);
    const claim = await claimDomain(t, alice.token, f, host('broken'));
    t.dns.fail(claim.verification.name, 'ESERVFAIL');
    const servfail = await verify(t, alice.token, f, claim.id);
    expectProblem(servfail, 422, 'domain_verification_failed');
    expect(servfail.json.detail).toContain('SERVFAIL');
    t.dns.fail(claim.verification.name, 'ETIMEOUT');
    const timeout = await verify(t, alice.token, f, claim.id);
    expectProblem(timeout, 503, 'dns_unavailable');
    expect(timeout.headers['retry-after']).toBe('30');
    expect(at(await claimsOf(claim.hostname), 0).verified_at).toBeNull();
  });

  it('the system resolver gives up on a DNS server that never answers', async () => {
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const servers = [`127.0.0.1:${silent.address().port}`];
      const dns = systemTxtResolver({ timeoutMs: 400, servers });
      const started = Date.now();
      const err = await checkChallenge(dns, 'www.alice.test', '0'.repeat(32)).catch((e) => e);
      expect(err).toMatchObject({ status: 503, code: 'dns_unavailable' });
      // The resolver's defaults (5 s a try, several tries) would take far longer.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      silent.close();
    }
  });

  it('a hostname too long for its challenge record is refused up front', async () => {
    const f = await frameOf(alice, aliceProject);
    // 231 characters fit (_frameplane-challenge. makes 253), 232 do not.
    const fits = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(39)}`;
    expect(fits).toHaveLength(231);
    expect((await claimDomain(t, alice.token, f, fits)).verification.name).toHaveLength(253);
    const r = await post(alice, f, `e${fits}`);
    expectProblem(r, 422, 'invalid_hostname');
    expect(r.json.detail).toContain('231');
  });
});

describe('squatting', () => {
  it("a first claim blocks nothing: the owner verifies, the squatter's claim goes", async () => {
    const hostname = host('www');
    const squat = await frameOf(mallory, malloryProject);
    const mine = await frameOf(alice, aliceProject);
    const squatterClaim = await claimDomain(t, mallory.token, squat, hostname);
    const aliceClaim = await claimDomain(t, alice.token, mine, hostname);
    // Two claims, two tokens: neither can pass for the other.
    expect(aliceClaim.verification.value).not.toBe(squatterClaim.verification.value);

    publish(t, aliceClaim); // Alice controls the DNS.
    const squatterTry = await verify(t, mallory.token, squat, squatterClaim.id);
    expectProblem(squatterTry, 422, 'domain_verification_failed');
    const ok = await verify(t, alice.token, mine, aliceClaim.id);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.verified).toBe(true);

    // The squatter's claim was removed in the same transaction; the name is now public.
    expect((await claimsOf(hostname)).map((d) => d.id)).toEqual([aliceClaim.id]);
    expect(await listOf(mallory, squat)).toEqual([]);
    expectProblem(await verify(t, mallory.token, squat, squatterClaim.id), 404, 'domain_not_found');
    expectProblem(await post(mallory, squat, hostname), 409, 'domain_taken');

    // The squatter's frame and project learn that the claim went, not who took it.
    const released = await t.db
      .selectFrom('frame_events')
      .selectAll()
      .where('frame_id', '=', squat.id)
      .where('type', '=', 'domain_released')
      .execute();
    expect(released).toHaveLength(1);
    expect(at(released, 0).actor_id).toBeNull();
    expect(at(released, 0).detail).toEqual({
      domain_id: squatterClaim.id,
      hostname,
      reason: 'verified_by_another_frame',
    });
    const audit = await t.get(`/v2/projects/${malloryProject.id}/audit`, { token: mallory.token });
    const entry = audit.json.data.find((a: any) => a.action === 'frame.domain_released');
    expect(entry).toBeDefined();
    expect(JSON.stringify(entry)).not.toContain(alice.id);
    expect(JSON.stringify(entry)).not.toContain(aliceProject.id);
  });

  it('no oracle: a claim of a name pending elsewhere answers as for a fresh name', async () => {
    const taken = host('pending');
    const fresh = host('fresh');
    const squat = await frameOf(mallory, malloryProject);
    await claimDomain(t, mallory.token, squat, taken);
    const mine = await frameOf(alice, aliceProject);
    const a = await post(alice, mine, taken);
    const b = await post(alice, mine, fresh);
    expect([a.status, b.status]).toEqual([201, 201]);
    const shape = (x: any) => ({
      ...x,
      id: 'x',
      hostname: 'x',
      created_at: 'x',
      verification: { ...x.verification, name: 'x', value: 'x' },
    });
    expect(shape(a.json)).toEqual(shape(b.json));
    expect(Object.keys(a.headers).sort()).toEqual(Object.keys(b.headers).sort());
    expect(await claimsOf(taken)).toHaveLength(2);

    // Only what is public answers 409: a verified name, or the frame's own claim.
    expectProblem(await post(alice, mine, taken), 409, 'domain_already_added');
    await verifiedDomain(t, alice.token, await frameOf(alice, aliceProject), fresh);
    expectProblem(await post(mallory, squat, fresh), 409, 'domain_taken');
  });

  it('deleting a verified domain releases the name for the next owner who proves it', async () => {
    const hostname = host('moving');
    const [a, b] = [await frameOf(alice, aliceProject), await frameOf(mallory, malloryProject)];
    const d = await verifiedDomain(t, alice.token, a, hostname);
    expectProblem(await post(mallory, b, hostname), 409, 'domain_taken');
    expect((await del(alice, a, d.id)).status).toBe(204);
    t.dns.clear(d.verification.name); // the DNS changed hands too
    const next = await verifiedDomain(t, mallory.token, b, hostname);
    expect(next.frame_id).toBe(b.id);
  });
});

describe('concurrency', () => {
  it('ten frames verify a hostname at once: exactly one wins, no other claim stays', async () => {
    const hostname = host('race');
    const frames = [];
    for (let i = 0; i < 10; i++) {
      frames.push(await frameOf(i % 2 ? alice : mallory, i % 2 ? aliceProject : malloryProject));
    }
    const tokenOf = (i: number) => (i % 2 ? alice : mallory).token;
    const claims: Array<{ id: string; verification: { name: string; value: string } }> = [];
    for (const [i, f] of frames.entries()) {
      claims.push(await claimDomain(t, tokenOf(i), f, hostname));
    }
    // Every token is in the DNS: each verification alone would pass.
    for (const c of claims) publish(t, c);
    const answers = await Promise.all(
      frames.map((f, i) => verify(t, tokenOf(i), f, at(claims, i).id)),
    );
    const statuses = answers.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    // The losers: the winner took the name (409), or had already deleted their claim (404).
    for (const r of answers.filter((x) => x.status !== 200)) {
      expect([409, 404], r.text).toContain(r.status);
      expect(r.json.code).toMatch(/^(domain_taken|domain_not_found)$/);
    }
    const rows = await claimsOf(hostname);
    expect(rows).toHaveLength(1);
    expect(at(rows, 0).verified_at).not.toBeNull();
    expect(at(rows, 0).id).toBe(answers.find((r) => r.status === 200)!.json.id);
  });

  it('claims made while a verification runs never outlive it', async () => {
    for (let round = 0; round < 5; round++) {
      const hostname = host('during');
      const owner = await frameOf(alice, aliceProject);
      const claim = await claimDomain(t, alice.token, owner, hostname);
      publish(t, claim);
      const others = await Promise.all([1, 2, 3].map(() => frameOf(mallory, malloryProject)));
      const [verified, ...posts] = await Promise.all([
        verify(t, alice.token, owner, claim.id),
        ...others.map((f) => post(mallory, f, hostname)),
      ]);
      expect(verified.status, verified.text).toBe(200);
      for (const p of posts) expect([201, 409], p.text).toContain(p.status);
      // A claim that came first was deleted by the verification; one that came after was refused.
      expect((await claimsOf(hostname)).map((d) => d.id)).toEqual([claim.id]);
    }
  });
});

describe('routing', () => {
  it('the agent is told verified hostnames only, and at once', async () => {
    const f = await frameOf(alice, aliceProject);
    const [pending, routed] = [host('pending'), host('routed')];
    await claimDomain(t, alice.token, f, pending);
    const claim = await claimDomain(t, alice.token, f, routed);
    publish(t, claim);
    expect(await routedTo(f.id)).toEqual([]);

    // A long poll in progress wakes on the verification.
    const started = Date.now();
    const held = sync(t, agent.token, {}, 20);
    await t.untilHolding('frameplane_agent', agent.id, 'the long poll');
    expect((await verify(t, alice.token, f, claim.id)).status).toBe(200);
    const answer = await held;
    // Half the wait: woken by the verification, not by the timeout.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(answer.frames.find((x) => x.frame_id === f.id)!.domains).toEqual([routed]);

    // And on its removal.
    const held2 = sync(t, agent.token, {}, 10);
    await t.untilHolding('frameplane_agent', agent.id, 'the second long poll');
    expect((await del(alice, f, claim.id)).status).toBe(204);
    expect((await held2).frames.find((x) => x.frame_id === f.id)!.domains).toEqual([]);
  });
});

describe('migration 0012', () => {
  it('makes claims from before verification pending, each with a token of its own', async () => {
    const t2 = await testApp();
    try {
      const u = await newUser(t2, 'old');
      const p = await newProject(t2, u, 'Old');
      const f = await newFrame(t2, u, p.id, await defaultSpace(t2, u, p.id));
      // Back to the table as 0002 made it, with two claims of that time.
      await sql`drop index domains_frame_hostname_key; drop index domains_hostname;
        alter table domains drop constraint domains_token_format;
        alter table domains drop column verification_token, drop column verified_at;
        create unique index domains_hostname_key on domains (hostname)`.execute(t2.db);
      await sql`insert into domains (id, frame_id, hostname, created_at) values
        ('dom_old1', ${f.id}, 'one.old.test', now()),
        ('dom_old2', ${f.id}, 'two.old.test', now())`.execute(t2.db);
      const migration = new URL('../../migrations/0012_domain_verification.sql', import.meta.url);
      await sql.raw(readFileSync(migration, 'utf8')).execute(t2.db);
      const rows = await t2.db.selectFrom('domains').selectAll().orderBy('id').execute();
      expect(rows.map((r) => r.verified_at)).toEqual([null, null]);
      expect(at(rows, 0).verification_token).toMatch(/^[0-9a-f]{32}$/);
      expect(at(rows, 0).verification_token).not.toBe(at(rows, 1).verification_token);
      // And they verify like new claims.
      const claim = (await t2.get(`${framePath(f)}/domains`, { token: u.token })).json.data[0];
      publish(t2, claim);
      expect((await verify(t2, u.token, f, claim.id)).json.verified).toBe(true);
    } finally {
      await t2.close();
    }
  });
});
