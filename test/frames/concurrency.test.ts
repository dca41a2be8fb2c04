// Frames under concurrent requests (CONTRACT 5 and 6): parallel stop/start on one frame,
// deleting a frame while its agent syncs, parallel scaling. Every request goes through HTTP
// against the real database; the checks read frame_events, which record one row per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { ADMIN, cloudWorld, defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';

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

const eventsOf = (frameId: string) =>
  t.db
    .selectFrom('frame_events')
    .selectAll()
    .where('frame_id', '=', frameId)
    .orderBy('id')
    .execute();
const rowOf = (frameId: string) =>
  t.db.selectFrom('frames').selectAll().where('id', '=', frameId).executeTakeFirstOrThrow();
const detailOf = (d: unknown) => (typeof d === 'string' ? JSON.parse(d) : d) as Record<string, any>;

/** A small seeded generator, so that a failing mix can be replayed from the printed seed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

type Reply = Awaited<ReturnType<TestApp['post']>>;

/** Sends `ops` to the frame all at once. */
const burst = (f: { project_id: string; space_id: string; id: string }, ops: string[]) =>
  Promise.all(ops.map((op) => t.post(`${framePath(f)}/${op}`, { token: ann.token })));

/**
 * Every request of a burst answered 202 and recorded one event; replaying the events in id
 * order from the frame's row before gives every noop flag, the final state, the generation and
 * the audit records; the API, the agent and each answer agree with the row.
 */
async function expectBurstRecorded(
  f: { project_id: string; space_id: string; id: string },
  before: Awaited<ReturnType<typeof rowOf>>,
  ops: string[],
  replies: Reply[],
  seed: number,
) {
  for (const [i, r] of replies.entries())
    expect(r.status, `seed ${seed}, request ${i} (${ops[i]}): ${r.text}`).toBe(202);

  const ops_ = (await eventsOf(f.id)).filter((e) => e.type === 'stop' || e.type === 'start');
  expect(ops_, `seed ${seed}`).toHaveLength(ops.length);
  expect(ops_.filter((e) => e.type === 'stop')).toHaveLength(
    ops.filter((o) => o === 'stop').length,
  );
  const after = await rowOf(f.id);
  const last = ops_.at(-1)!;
  expect(after.desired_state, `seed ${seed}`).toBe(last.type === 'stop' ? 'stopped' : 'running');

  // The events are in the order the changes were applied.
  let desired = before.desired_state;
  let changes = 0;
  for (const e of ops_) {
    const target = e.type === 'stop' ? 'stopped' : 'running';
    const noop = detailOf(e.detail).noop;
    expect(noop, `seed ${seed}, event ${e.id}`).toBe(target === desired);
    if (!noop) changes++;
    desired = target;
  }
  expect(desired).toBe(after.desired_state);
  expect(after.generation - before.generation, `seed ${seed}`).toBe(changes);
  // The row names the newest event (migrations/0016), and each change has its audit record.
  expect(after.last_event_id).toBe((await eventsOf(f.id)).at(-1)?.id);
  const audits = await t.db
    .selectFrom('audit_events')
    .select('action')
    .where('target_id', '=', f.id)
    .where('action', 'in', ['frame.stop', 'frame.start'])
    .execute();
  expect(audits, `seed ${seed}`).toHaveLength(changes);

  // The API and the agent agree with the row.
  expect((await t.get(framePath(f), { token: ann.token })).json.desired_state).toBe(
    after.desired_state,
  );
  const told = (await sync(t, agent.token)).frames.find((x) => x.frame_id === f.id);
  expect(told).toMatchObject({
    desired_state: after.desired_state,
    generation: after.generation,
  });

  // Each 202 shows the frame as that request left it, not as a later request did.
  const wrong = replies
    .map((r, i) => [i, ops[i], r.json.desired_state])
    .filter(([, op, d]) => d !== (op === 'stop' ? 'stopped' : 'running'));
  expect
    .soft(wrong, "answers showing another request's desired_state [index, op, desired_state]")
    .toEqual([]);
}

describe('parallel stops and starts', () => {
  it('on one frame: all answer 202, one event each, and the final state and generation follow the events', async () => {
    const seed = Date.now() % 100000;
    const rand = rng(seed);
    const f = await newFrame(t, ann, project.id, space);
    // Once the new frame has settled (its creation's wake-ups heard), the burst takes both paths
    // of frame-ops-service: the first writes find the row as they read it, the rest find it
    // moved and decide locked.
    await t.settled();
    const before = await rowOf(f.id);
    const ops = Array.from({ length: 50 }, () => (rand() < 0.5 ? 'stop' : 'start'));
    await expectBurstRecorded(f, before, ops, await burst(f, ops), seed);
  });

  it('on many frames at once, their writes sharing statements: each frame as if alone', async () => {
    const seed = Date.now() % 100000;
    const rand = rng(seed);
    const frames = [];
    for (let i = 0; i < 8; i++) frames.push(await newFrame(t, ann, project.id, space));
    await t.settled();
    // Each frame read once, so that its writes start from the row remembered (frame-rows.ts).
    for (const f of frames) await t.get(framePath(f), { token: ann.token });
    const befores = await Promise.all(frames.map((f) => rowOf(f.id)));
    const ops = frames.map(() =>
      Array.from({ length: 6 }, () => (rand() < 0.5 ? 'stop' : 'start')),
    );
    const replies = await Promise.all(frames.map((f, i) => burst(f, ops[i] ?? [])));
    for (const [i, f] of frames.entries())
      await expectBurstRecorded(f, befores[i]!, ops[i] ?? [], replies[i] ?? [], seed);
  });
});

describe('deleting a frame while its agent syncs', () => {
  it('never answers 5xx and the deleted frame never comes back in a later sync answer', async () => {
    const keep = await newFrame(t, ann, project.id, space, { name: 'keep' });
    const failures: string[] = [];
    for (let round = 0; round < 20; round++) {
      const f = await newFrame(t, ann, project.id, space, { name: `doomed-${round}` });
      await sync(t, agent.token, { events: [{ frame_id: f.id, replica: 0, type: 'starting' }] });
      const at = new Date().toISOString();
      const bodies = [
        { events: [{ frame_id: f.id, replica: 0, type: 'healthy' }] },
        {
          events: [
            { frame_id: f.id, replica: 0, type: 'crashed' },
            { frame_id: f.id, replica: 1, type: 'oom' },
          ],
        },
        {
          events: [{ frame_id: f.id, replica: 0, type: 'pulling' }],
          logs: [{ frame_id: f.id, replica: 0, at, line: 'pulling' }],
        },
        { logs: [{ frame_id: f.id, replica: 0, at, line: `round ${round}` }] },
        {
          logs: [
            { frame_id: keep.id, replica: 0, at, line: 'other frame' },
            { frame_id: f.id, replica: 0, at, line: 'doomed frame' },
          ],
        },
        {},
      ];
      // The syncs land before, during and after the DELETE's transaction.
      const fire = (body: Record<string, unknown>) =>
        t.post('/v2/agent/sync', { token: agent.token, body }).then((reply) => ({ body, reply }));
      const early = bodies.map(fire);
      const del = t.del(framePath(f), { token: ann.token });
      const late = bodies.map((body, i) =>
        new Promise((r) => setTimeout(r, 1 + i + (round % 4))).then(() => fire(body)),
      );
      const [d, ...answers] = await Promise.all([del, ...early, ...late]);
      if (d.status !== 200) failures.push(`round ${round}: DELETE ${d.status} ${d.text}`);
      for (const { body, reply } of answers) {
        if (reply.status !== 200)
          failures.push(
            `round ${round}: sync ${JSON.stringify(body)} answered ${reply.status} ${reply.json?.code}`,
          );
      }
      // Every sync that starts after the DELETE answered no longer sees the frame.
      for (const body of [{}, { events: [{ frame_id: f.id, replica: 0, type: 'healthy' }] }]) {
        const later = await t.post('/v2/agent/sync', { token: agent.token, body });
        if (later.status !== 200)
          failures.push(`round ${round}: later sync ${later.status} ${later.text}`);
        else if (later.json.frames.some((x: any) => x.frame_id === f.id))
          failures.push(`round ${round}: deleted ${f.id} still in a sync answer`);
      }
      expect(
        await t.db.selectFrom('frames').select('id').where('id', '=', f.id).executeTakeFirst(),
      ).toBeUndefined();
      expect(
        await t.db
          .selectFrom('frame_replicas')
          .select('frame_id')
          .where('frame_id', '=', f.id)
          .executeTakeFirst(),
      ).toBeUndefined();
    }
    expect(failures).toEqual([]);
    // The frame that stayed is untouched by all this.
    expect((await t.get(framePath(keep), { token: ann.token })).status).toBe(200);
  });
});

describe('parallel syncs and billing changes touching the same frames in different orders', () => {
  it('never answer 5xx (no deadlock reaches the client)', async () => {
    const bob = await newUser(t, 'bob');
    const bobs = await newProject(t, bob);
    const bobSpace = await defaultSpace(t, bob, bobs.id);
    const a = await newFrame(t, bob, bobs.id, bobSpace, { name: 'a' });
    const b = await newFrame(t, bob, bobs.id, bobSpace, { name: 'b' });
    const ev = (id: string, type: string) => ({ frame_id: id, replica: 0, type });
    const failures: string[] = [];
    // One agent sync at a time (reporting both frames, in either order), with the operator's
    // billing change and a user's PATCH and stop/start landing at the same moment.
    for (let round = 0; round < 40; round++) {
      const events =
        round % 2
          ? [ev(a.id, 'healthy'), ev(b.id, 'unhealthy')]
          : [ev(b.id, 'healthy'), ev(a.id, 'starting')];
      const requests = [
        t.post('/v2/agent/sync', { token: agent.token, body: { events } }),
        t.put(`/v2/admin/users/${bob.id}/billing`, {
          token: ADMIN,
          body: { status: round % 4 < 2 ? 'past_due' : 'active' },
        }),
        t.patch(framePath(b), { token: bob.token, body: { replica_count: 1 + (round % 3) } }),
        t.post(`${framePath(a)}/${round % 3 ? 'stop' : 'start'}`, { token: bob.token }),
      ];
      for (const [i, r] of (await Promise.all(requests)).entries()) {
        if (r.status >= 500)
          failures.push(
            `round ${round}, ${['sync', 'billing', 'PATCH', 'stop/start'][i]}: ${r.status} ${r.json?.code}`,
          );
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('20 parallel PATCHes of replica_count', () => {
  it('end with one of the requested values and the generation bumped once per actual change', async () => {
    const f = await newFrame(t, ann, project.id, space, { replica_count: 1 });
    const path = framePath(f);
    const before = await rowOf(f.id);
    // 1..20 shuffled: the request for 1 (the current value) may or may not be a change,
    // depending on what ran before it.
    const rand = rng(Date.now() % 100000);
    const values = Array.from({ length: 20 }, (_, i) => i + 1).sort(() => rand() - 0.5);
    const replies = await Promise.all(
      values.map((n) => t.patch(path, { token: ann.token, body: { replica_count: n } })),
    );
    for (const r of replies) expect(r.status, r.text).toBe(200);
    const after = await rowOf(f.id);
    expect(values).toContain(after.replica_count);

    const updates = (await eventsOf(f.id)).filter((e) => e.type === 'updated');
    expect(updates).toHaveLength(20);
    const changed = updates.map((e) => detailOf(e.detail)).filter((d) => 'replica_count' in d);
    // The last change recorded is the value that stayed.
    expect(changed.at(-1)?.replica_count ?? before.replica_count).toBe(after.replica_count);
    // Replaying the changes: each differs from the value before it.
    let current = before.replica_count;
    for (const d of changed) {
      expect(d.replica_count).not.toBe(current);
      current = d.replica_count;
    }
    expect(after.generation - before.generation).toBe(changed.length);
    expect(after.version - before.version).toBe(20);

    const read = await t.get(path, { token: ann.token });
    expect(read.json).toMatchObject({
      replica_count: after.replica_count,
      generation: after.generation,
    });
    expect(read.headers.etag).toBe(`"${f.id}.v${after.version}"`);
    const told = (await sync(t, agent.token)).frames.find((x) => x.frame_id === f.id);
    expect(told).toMatchObject({
      replica_count: after.replica_count,
      generation: after.generation,
    });

    // Each 200 shows the frame as that PATCH left it (with that version's ETag), not a later one.
    const wrong = replies
      .map((r, i) => [values[i], r.json.replica_count])
      .filter(([asked, got]) => asked !== got);
    expect
      .soft(wrong, "answers showing another PATCH's replica_count [asked, answered]")
      .toEqual([]);
    for (const r of replies) expect.soft(r.headers.etag).toBe(`"${f.id}.v${r.json.version}"`);
  });
});
