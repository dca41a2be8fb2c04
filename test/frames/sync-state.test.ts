// The sync's `state` digest: an agent that sends back the state it holds as `known_state` is told
// `unchanged` while that state is current, and the whole desired state once anything it is told
// changed: a stop or a start, billing suspension, a failed build.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import type { TestUser } from '../helpers/factories.ts';
import { ADMIN, cloudWorld, framePath, newFrame, sync } from '../helpers/frames.ts';
import { only } from '../helpers/checked.ts';
import { claimDomain, publish, verify } from '../helpers/domains.ts';

let t: TestApp;
let ann: TestUser;
let project: { id: string };
let space: string;
let agent: { id: string; token: string };

beforeAll(async () => {
  t = await testApp();
  ({ ann, project, space, agent } = await cloudWorld(t));
});
afterAll(async () => {
  await t.close();
});

type Answer = Awaited<ReturnType<typeof sync>> & { state: string; unchanged?: true };
const syncKnown = async (known: string, body: Record<string, unknown> = {}, wait?: number) =>
  (await sync(t, agent.token, { known_state: known, ...body }, wait)) as Answer;
const full = async () => (await sync(t, agent.token)) as Answer;

/** The state now, after checking that it is current: sent back, it is `unchanged`. */
async function current() {
  const answer = await full();
  expect(answer.state).toMatch(/^[0-9a-f]{32}$/);
  expect(await syncKnown(answer.state)).toEqual({
    unchanged: true,
    state: answer.state,
    sync_after_ms: answer.sync_after_ms,
  });
  return answer;
}

describe('known_state', () => {
  it('is answered `unchanged` while current, and with every frame once a stop moved it', async () => {
    const f = await newFrame(t, ann, project.id, space);
    const before = await current();
    expect(before.frames.some((x) => x.frame_id === f.id)).toBe(true);

    const stop = await t.post(`${framePath(f)}/stop`, { token: ann.token });
    expect(stop.status, stop.text).toBe(202);
    const after = await syncKnown(before.state);
    expect(after.unchanged).toBeUndefined();
    expect(after.state).not.toBe(before.state);
    expect(after.frames.find((x) => x.frame_id === f.id)?.desired_state).toBe('stopped');
    expect((await current()).state).toBe(after.state);
  });

  it('moves with billing suspension and back, and with a failed build', async () => {
    const f = await newFrame(t, ann, project.id, space);
    const active = await current();
    const billing = (status: string) =>
      t.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status } });
    expect((await billing('past_due')).status).toBe(200);
    const suspended = await syncKnown(active.state);
    expect(suspended.unchanged).toBeUndefined();
    expect(suspended.frames.find((x) => x.frame_id === f.id)?.desired_state).toBe('stopped');
    expect((await billing('active')).status).toBe(200);
    const restored = await current();
    expect(restored.state).not.toBe(suspended.state);

    const told = only(restored.frames.filter((x) => x.frame_id === f.id));
    const failed = await syncKnown(restored.state, {
      builds: [{ deployment_id: told.deployment_id, state: 'failed', message: 'no Dockerfile' }],
    });
    // The report changed what the agent is told: the answer says so at once.
    expect(failed.unchanged).toBeUndefined();
    expect(failed.frames.find((x) => x.frame_id === f.id)?.build_failed).toBe(true);
    expect((await current()).state).toBe(failed.state);
  });

  it('with ?wait holds an unchanged answer, and answers every frame when a start comes', async () => {
    const f = await newFrame(t, ann, project.id, space);
    await t.post(`${framePath(f)}/stop`, { token: ann.token });
    const held = await current();

    let started = Date.now();
    const idle = await syncKnown(held.state, {}, 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(idle.unchanged).toBe(true);

    started = Date.now();
    const waiting = syncKnown(held.state, {}, 20);
    await t.untilHolding('frameplane_agent', agent.id, 'the long poll');
    expect((await t.post(`${framePath(f)}/start`, { token: ann.token })).status).toBe(202);
    const woken = await waiting;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(woken.frames.find((x) => x.frame_id === f.id)?.desired_state).toBe('running');
  });

  it('moves when a domain is verified, not while it is only claimed', async () => {
    const f = await newFrame(t, ann, project.id, space);
    const before = await current();
    const claim = await claimDomain(t, ann.token, f, 'state.example.com');
    expect((await syncKnown(before.state)).unchanged).toBe(true);
    publish(t, claim);
    expect((await verify(t, ann.token, f, claim.id)).status).toBe(200);
    const routed = await syncKnown(before.state);
    expect(routed.unchanged).toBeUndefined();
    expect(routed.frames.find((x) => x.frame_id === f.id)?.domains).toEqual(['state.example.com']);
    expect((await current()).state).toBe(routed.state);
  });

  it('that is not a digest is refused (422) and changes nothing', async () => {
    const r = await t.post('/v2/agent/sync', { token: agent.token, body: { known_state: 'x' } });
    expect(r.status).toBe(422);
    expect(r.headers['content-type']).toMatch(/problem\+json/);
  });
});
