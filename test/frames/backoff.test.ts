// Automatic back-off over HTTP (spec 3 and 8, CONTRACT 5 and 6): five crashes in a row, or an
// image pull stuck for more than three minutes of service time, stop the frame with reason
// backoff_tripped; a deploy (what a push does) or a start clears the trip; reports of an older
// rollout never count toward the streak.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import type { TestUser } from '../helpers/factories.ts';
import { ADMIN, cloudWorld, framePath, newFrame, replicaEvents, sync } from '../helpers/frames.ts';
import { at } from '../helpers/checked.ts';

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

async function frame(extra: Record<string, unknown> = {}) {
  const f = await newFrame(t, ann, project.id, space, extra);
  expect(f.agent_id).toBe(agent.id);
  return f as { id: string; project_id: string; space_id: string; generation: number };
}
const read = async (f: { id: string; project_id: string; space_id: string }) => {
  const r = await t.get(framePath(f), { token: ann.token });
  expect(r.status, r.text).toBe(200);
  return r.json;
};
/** What the agent is told about this frame. */
async function told(frameId: string, body: Record<string, unknown> = {}) {
  const s = await sync(t, agent.token, body);
  return s.frames.find((x) => x.frame_id === frameId);
}
const crash = (frameId: string, replica = 0, extra: Record<string, unknown> = {}) =>
  sync(t, agent.token, { events: [{ frame_id: frameId, replica, type: 'crashed', ...extra }] });
const advance = async (seconds: number) => {
  const r = await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } });
  expect(r.status, r.text).toBe(200);
};
const eventsOf = (frameId: string) =>
  t.db
    .selectFrom('frame_events')
    .selectAll()
    .where('frame_id', '=', frameId)
    .orderBy('id')
    .execute();

describe('five crashes in a row', () => {
  it('trip the breaker: Stopped, backoff_tripped, the back-off object filled in, the agent told stopped', async () => {
    const f = await frame();
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'starting') });
    for (let i = 1; i <= 4; i++) {
      await crash(f.id);
      const mid = await read(f);
      expect(mid).toMatchObject({
        status: 'Error',
        status_reason: 'crash',
        desired_state: 'running',
      });
      expect(mid.backoff).toMatchObject({ crash_streak: i, threshold: 5, tripped_at: null });
    }
    const before = await told(f.id);
    expect(before?.desired_state).toBe('running');

    await crash(f.id);
    const tripped = await read(f);
    expect(tripped).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      desired_state: 'stopped',
    });
    expect(tripped.backoff).toMatchObject({ crash_streak: 5, threshold: 5, pulling_since: null });
    expect(Date.parse(tripped.backoff.tripped_at)).not.toBeNaN();
    expect(tripped.backoff.clears_on).toEqual(expect.arrayContaining(['push', 'deploy', 'start']));

    const after = await told(f.id);
    expect(after).toMatchObject({ desired_state: 'stopped' });
    expect(after!.generation).toBeGreaterThan(before!.generation);

    const events = await eventsOf(f.id);
    const trip = events.filter((e) => e.type === 'backoff_tripped');
    expect(trip).toHaveLength(1);
    expect(at(trip, 0).status_reason).toBe('backoff_tripped');
    expect(events.filter((e) => e.type === 'status').at(-1)).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
    });
    // GET reads the same thing as the list.
    const list = await t.get(`/v2/projects/${project.id}/spaces/${space}/frames?limit=200`, {
      token: ann.token,
    });
    expect(list.json.data.find((x: any) => x.id === f.id)).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
    });
  });

  it('count crashes and oom of any replica, and the reporting sync itself hears the stop at once', async () => {
    const f = await frame({ replica_count: 2 });
    const events = [
      { frame_id: f.id, replica: 0, type: 'crashed' },
      { frame_id: f.id, replica: 1, type: 'oom' },
      { frame_id: f.id, replica: 0, type: 'unhealthy' }, // neither counts nor resets
      { frame_id: f.id, replica: 0, type: 'oom' },
      { frame_id: f.id, replica: 1, type: 'crashed' },
      { frame_id: f.id, replica: 1, type: 'starting' },
      { frame_id: f.id, replica: 0, type: 'crashed' },
    ];
    const answer = await sync(t, agent.token, { events });
    expect(answer.frames.find((x) => x.frame_id === f.id)?.desired_state).toBe('stopped');
    expect(await read(f)).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      backoff: { crash_streak: 5 },
    });
  });

  it('four crashes, a healthy report, four crashes: no trip', async () => {
    const f = await frame();
    for (let i = 0; i < 4; i++) await crash(f.id);
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'healthy') });
    expect((await read(f)).backoff.crash_streak).toBe(0);
    for (let i = 0; i < 4; i++) await crash(f.id);
    const r = await read(f);
    expect(r).toMatchObject({ desired_state: 'running', status: 'Error', status_reason: 'crash' });
    expect(r.backoff).toMatchObject({ crash_streak: 4, tripped_at: null });
    expect((await told(f.id))?.desired_state).toBe('running');
    expect((await eventsOf(f.id)).some((e) => e.type === 'backoff_tripped')).toBe(false);
  });
});

describe('clearing a trip', () => {
  async function trippedFrame() {
    const f = await frame();
    for (let i = 0; i < 5; i++) await crash(f.id);
    expect(await read(f)).toMatchObject({ status: 'Stopped', status_reason: 'backoff_tripped' });
    return f;
  }

  it('a deploy (what a push does) clears it, scales back up, and the streak starts again from zero', async () => {
    const f = await trippedFrame();
    const deploy = await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    expect(deploy.status, deploy.text).toBe(202);
    expect(deploy.json).toMatchObject({ trigger: 'manual', status: 'in_progress' });
    const r = await read(f);
    expect(r).toMatchObject({ status: 'Starting', status_reason: null, desired_state: 'running' });
    expect(r.backoff).toMatchObject({ crash_streak: 0, tripped_at: null });
    const s = await told(f.id);
    expect(s).toMatchObject({ desired_state: 'running', deployment_id: deploy.json.id });
    // A fresh streak: four crashes do not trip, the fifth does.
    for (let i = 0; i < 4; i++) await crash(f.id, 0, { generation: s!.generation });
    expect(await read(f)).toMatchObject({
      desired_state: 'running',
      backoff: { crash_streak: 4, tripped_at: null },
    });
    await crash(f.id, 0, { generation: s!.generation });
    expect(await read(f)).toMatchObject({ status: 'Stopped', status_reason: 'backoff_tripped' });
  });

  it('a start clears it too', async () => {
    const f = await trippedFrame();
    // The agent scaled the frame to zero, as it was told.
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'stopped') });
    expect(await read(f)).toMatchObject({ status: 'Stopped', status_reason: 'backoff_tripped' });
    const start = await t.post(`${framePath(f)}/start`, { token: ann.token });
    expect(start.status, start.text).toBe(202);
    expect(start.json).toMatchObject({
      desired_state: 'running',
      status: 'Starting',
      backoff: { crash_streak: 0, tripped_at: null },
    });
    expect((await told(f.id))?.desired_state).toBe('running');
    for (let i = 0; i < 4; i++) await crash(f.id);
    expect(await read(f)).toMatchObject({
      desired_state: 'running',
      backoff: { crash_streak: 4, tripped_at: null },
    });
    const events = await eventsOf(f.id);
    expect(events.filter((e) => e.type === 'start').map((e) => e.detail)).toEqual([
      { noop: false },
    ]);
  });
});

describe('reports of an older rollout', () => {
  it('do not count toward the streak of the current deployment', async () => {
    const f = await frame();
    const old = (await told(f.id))!.generation;
    const deploy = await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    expect(deploy.status).toBe(202);
    const current = (await told(f.id))!.generation;
    expect(current).toBeGreaterThan(old);

    // Five late crash reports of the previous rollout: history, not a streak.
    for (let i = 0; i < 5; i++) await crash(f.id, 0, { generation: old });
    let r = await read(f);
    expect(r).toMatchObject({
      desired_state: 'running',
      status: 'Starting',
      backoff: { crash_streak: 0, tripped_at: null },
    });
    expect(r.latest_deployment).toMatchObject({ id: deploy.json.id, status: 'in_progress' });

    // Four current crashes, one old one in the middle: still four.
    for (let i = 0; i < 2; i++) await crash(f.id, 0, { generation: current });
    await crash(f.id, 1, { generation: old });
    for (let i = 0; i < 2; i++) await crash(f.id, 0, { generation: current });
    r = await read(f);
    expect(r).toMatchObject({
      desired_state: 'running',
      backoff: { crash_streak: 4, tripped_at: null },
    });
    // The fifth current one trips.
    await crash(f.id, 0, { generation: current });
    expect(await read(f)).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      backoff: { crash_streak: 5 },
    });
  });
});

describe('an image pull stuck for more than three minutes of service time', () => {
  // These advance the service clock; they run last in this file.
  it('does not trip at 179 s, trips past 180 s, and the agent is told stopped', async () => {
    const f = await frame();
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'pulling') });
    const pulling = await read(f);
    expect(pulling.status).toBe('Starting');
    expect(Date.parse(pulling.backoff.pulling_since)).not.toBeNaN();

    await advance(179);
    expect(await read(f)).toMatchObject({
      status: 'Starting',
      desired_state: 'running',
      backoff: { tripped_at: null },
    });
    expect((await told(f.id))?.desired_state).toBe('running');

    await advance(2);
    const r = await read(f);
    expect(r).toMatchObject({
      status: 'Stopped',
      status_reason: 'backoff_tripped',
      desired_state: 'stopped',
    });
    expect(Date.parse(r.backoff.tripped_at)).not.toBeNaN();
    expect((await told(f.id))?.desired_state).toBe('stopped');
    const trip = (await eventsOf(f.id)).filter((e) => e.type === 'backoff_tripped');
    expect(trip).toHaveLength(1);
    expect(at(trip, 0).detail).toMatchObject({ cause: 'image_pull_timeout' });

    // The Deploy action clears this trip as well.
    expect((await t.post(`${framePath(f)}/deploy`, { token: ann.token })).status).toBe(202);
    expect(await read(f)).toMatchObject({
      status: 'Starting',
      desired_state: 'running',
      backoff: { tripped_at: null },
    });
  });

  it('a pull that moves on before the limit does not trip, however long the frame then runs', async () => {
    const f = await frame();
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'pulling') });
    await advance(120);
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'starting') });
    await advance(200);
    expect(await read(f)).toMatchObject({
      status: 'Starting',
      desired_state: 'running',
      backoff: { tripped_at: null, pulling_since: null },
    });
  });

  it('a pull reported for an older rollout does not trip the current one', async () => {
    const f = await frame();
    const old = (await told(f.id))!.generation;
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'pulling', { generation: old }) });
    expect((await t.post(`${framePath(f)}/deploy`, { token: ann.token })).status).toBe(202);
    await advance(200);
    expect(await read(f)).toMatchObject({
      status: 'Starting',
      desired_state: 'running',
      backoff: { tripped_at: null },
    });
  });
});
