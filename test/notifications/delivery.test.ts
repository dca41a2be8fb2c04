// Notifications end to end, through the job queue to a real receiver on loopback: the receiver
// verifies every delivery with the secret the API printed; a receiver that fails twice gets the
// event on the third try (the clock moved, not waited for); a redelivery sends the same event;
// an endpoint gets only the events it chose; an event in a rolled-back transaction sends nothing.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../../src/db/database.ts';
import { notifyOfFrame } from '../../src/notifications/notify.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import {
  ADMIN,
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  serveAt,
} from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Receiver, startReceiver } from './receiver.ts';

let t: TestApp;
let ann: TestUser;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await testApp({
    worker: true,
    env: { NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES: 'true', NOTIFICATIONS_ALLOW_HTTP: 'true' },
  });
  ann = await newUser(t, 'ann');
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await t.close();
});

/** A project with an endpoint for `events` at a new receiver that checks its signature. */
async function endpointFor(events: string[], answer?: (n: number) => number, format?: string) {
  const project = await newProject(t, ann, `Shop ${receivers.length}`);
  let secret: string | undefined;
  const receiver = await startReceiver({ answer, secret: () => secret, now: () => t.clock.now() });
  receivers.push(receiver);
  const r = await t.post(`/v2/projects/${project.id}/notifications`, {
    token: ann.token,
    body: { url: receiver.url, events, ...(format ? { format } : {}) },
  });
  expect(r.status, r.text).toBe(201);
  expect(r.json.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  secret = r.json.secret;
  const base = `/v2/projects/${project.id}/notifications/${r.json.id}`;
  /** The receiver takes a new secret, as its owner would after a rotation. */
  const holds = (s: string) => {
    secret = s;
  };
  return { project, receiver, endpoint: r.json, base, holds };
}

const advance = (seconds: number) =>
  t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } });

async function deliveries(base: string) {
  const r = await t.get(`${base}/deliveries`, { token: ann.token });
  expect(r.status, r.text).toBe(200);
  return r.json.data as any[];
}

/** The newest delivery once `tries` tries of it are logged (the receiver hears of a try
 *  before the job has written it down). */
const logged = (base: string, tries: number) =>
  waitFor(`${tries} tries logged`, async () => {
    const [d] = await deliveries(base);
    return d?.attempts.length >= tries && d;
  });

describe('notifications', { timeout: 60_000 }, () => {
  it('signs every delivery: the receiver verifies it with the secret shown once', async () => {
    const { receiver, base, project, endpoint, holds } = await endpointFor(['deploy.started']);
    const ping = await t.post(`${base}/test`, { token: ann.token });
    expect(ping.status, ping.text).toBe(202);
    expect(ping.json).toMatchObject({ event_type: 'ping', status: 'pending', manual: true });
    await receiver.until(1);
    const got = receiver.got[0];
    expect(got?.verified).toBe(true);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers['frameplane-event-id']).toBe(ping.json.event_id);
    expect(got?.headers['frameplane-delivery-id']).toBe(ping.json.id);
    expect(JSON.parse(got?.body ?? '')).toEqual({
      id: ping.json.event_id,
      type: 'ping',
      created_at: expect.any(String),
      project: { id: project.id, name: project.name },
      data: { endpoint_id: ping.json.endpoint_id, events: ['deploy.started'] },
    });

    // A real event: creating a frame starts its first deployment.
    const space = await defaultSpace(t, ann, project.id);
    const frame = await newFrame(t, ann, project.id, space);
    await receiver.until(2);
    await logged(base, 1);
    const event = receiver.events()[1];
    expect(receiver.got[1]?.verified).toBe(true);
    expect(event).toMatchObject({
      type: 'deploy.started',
      project: { id: project.id },
      data: {
        frame: { id: frame.id, name: 'web', space_id: space },
        deployment: { trigger: 'create', status: 'in_progress', branch: 'main' },
      },
    });
    const log = await deliveries(base);
    expect(log.map((d) => d.event_type)).toEqual(['deploy.started', 'ping']);
    expect(log[0]).toMatchObject({ status: 'succeeded', attempts: [{ attempt: 1, ok: true }] });
    expect(log[0].attempts[0]).toMatchObject({ status_code: 200, response_excerpt: 'thanks' });

    // Rotated: what was printed before no longer verifies; the new secret does.
    const rotated = await t.post(`${base}/secret`, { token: ann.token });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(endpoint.secret);
    const again = await t.post(`${base}/test`, { token: ann.token });
    expect(again.status).toBe(202);
    await receiver.until(3);
    expect(receiver.got[2]?.verified).toBe(false); // the receiver still holds the old secret

    // Rotated with an overlap: the secret the receiver holds goes on signing for an hour,
    // next to the new one, then stops.
    holds(rotated.json.secret);
    const rolled = await t.post(`${base}/secret`, {
      token: ann.token,
      body: { expire_previous_in_hours: 1 },
    });
    expect(rolled.status, rolled.text).toBe(200);
    const until = Date.parse(rolled.json.previous_secret_expires_at);
    expect(Math.abs(until - t.clock.now().getTime() - 3_600_000)).toBeLessThan(5000);
    await t.post(`${base}/test`, { token: ann.token });
    await receiver.until(4);
    expect(receiver.got[3]?.verified).toBe(true);
    expect(receiver.got[3]?.headers['frameplane-signature']).toMatch(/^t=\d+,v1=\w{64},v1=\w{64}$/);
    await advance(3601);
    await t.post(`${base}/test`, { token: ann.token });
    await receiver.until(5);
    expect(receiver.got[4]?.verified).toBe(false);
    holds(rolled.json.secret);
    await t.post(`${base}/test`, { token: ann.token });
    await receiver.until(6);
    expect(receiver.got[5]?.verified).toBe(true);
    expect(receiver.got[5]?.headers['frameplane-signature']).toMatch(/^t=\d+,v1=\w{64}$/);
    const refused = await t.post(`${base}/secret`, {
      token: ann.token,
      body: { expire_previous_in_hours: 25 },
    });
    expect(refused.status).toBe(422);
  });

  it('tries again on the schedule until a receiver that failed twice takes the event', async () => {
    const { receiver, base, project } = await endpointFor(['deploy.started'], (n) =>
      n <= 2 ? 500 : 200,
    );
    const space = await defaultSpace(t, ann, project.id);
    await newFrame(t, ann, project.id, space);
    await receiver.until(1);
    const first = await logged(base, 1);
    expect(first).toMatchObject({ status: 'pending', last_error: expect.stringContaining('500') });
    const due = Date.parse(first.next_attempt_at) - Date.parse(first.attempts[0].at);
    // A minute after the try (which took a few milliseconds).
    expect(due).toBeGreaterThanOrEqual(60_000);
    expect(due).toBeLessThan(61_000);

    // Nothing happens before its time; then the operator's clock moves and it is sent.
    await advance(59);
    expect(receiver.got).toHaveLength(1);
    await advance(1);
    await receiver.until(2);
    await logged(base, 2);
    await advance(300);
    await receiver.until(3);
    const done = await logged(base, 3);
    expect(done.status).toBe('succeeded');
    expect(done.attempts.map((a: any) => [a.attempt, a.status_code, a.ok])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 200, true],
    ]);
    expect(done.attempts[0].response_excerpt).toBe('no (500)');
    // The same event, byte for byte, every time; each try signed anew.
    expect(new Set(receiver.got.map((g) => g.body)).size).toBe(1);
    expect(receiver.got.every((g) => g.verified)).toBe(true);
    const endpoint = await t.get(base, { token: ann.token });
    expect(endpoint.json).toMatchObject({ enabled: true, consecutive_failures: 0 });
  });

  it('sends a delivery again with the same event id and body', async () => {
    const { receiver, base } = await endpointFor(['deploy.started']);
    const ping = await t.post(`${base}/test`, { token: ann.token });
    await receiver.until(1);
    const re = await t.post(`${base}/deliveries/${ping.json.id}/redeliver`, { token: ann.token });
    expect(re.status, re.text).toBe(202);
    expect(re.json).toMatchObject({ redelivery_of: ping.json.id, event_id: ping.json.event_id });
    expect(re.json.id).not.toBe(ping.json.id);
    await receiver.until(2);
    expect(receiver.got[1]?.body).toBe(receiver.got[0]?.body);
    expect(receiver.got[1]?.headers['frameplane-event-id']).toBe(ping.json.event_id);
    expect(receiver.got[1]?.headers['frameplane-delivery-id']).toBe(re.json.id);
    const shown = await waitFor('the redelivery to be logged', async () => {
      const r = await t.get(`${base}/deliveries/${re.json.id}`, { token: ann.token });
      return r.json.status === 'succeeded' && r.json;
    });
    expect(shown.attempts).toHaveLength(1);
    const missing = await t.post(`${base}/deliveries/dlv_01NOPE/redeliver`, { token: ann.token });
    expect(missing.status).toBe(404);
  });

  it('sends each endpoint only the events it chose, in its format', async () => {
    const a = await endpointFor(['deploy.succeeded']);
    const project = a.project;
    let secret: string | undefined;
    const slack = await startReceiver({ secret: () => secret, now: () => t.clock.now() });
    receivers.push(slack);
    const b = await t.post(`/v2/projects/${project.id}/notifications`, {
      token: ann.token,
      body: { url: slack.url, events: ['frame.online', 'member.added'], format: 'slack' },
    });
    expect(b.status, b.text).toBe(201);
    secret = b.json.secret;

    const agent = await cloudAgent(t, 'chosen-events');
    const space = await defaultSpace(t, ann, project.id);
    const frame = await newFrame(t, ann, project.id, space, { name: 'api' });
    await t.db
      .updateTable('frames')
      .set({ agent_id: agent.id })
      .where('id', '=', frame.id)
      .execute();
    await serveAt(t, agent.token, frame.id, 'a'.repeat(40));
    const f = await t.get(framePath(frame), { token: ann.token });
    expect(f.json.status).toBe('Online');

    await a.receiver.until(1);
    await slack.until(1);
    // Whatever else these endpoints were to get would be queued by now (with its change).
    const endpoints = [a.endpoint.id, b.json.id];
    await waitFor('no delivery pending', async () => {
      const pending = await t.db
        .selectFrom('notification_deliveries')
        .select('id')
        .where('endpoint_id', 'in', endpoints)
        .where('status', '=', 'pending')
        .execute();
      return pending.length === 0;
    });
    expect(a.receiver.events().map((e) => e.type)).toEqual(['deploy.succeeded']);
    expect(a.receiver.events()[0].data.deployment).toMatchObject({ status: 'succeeded' });
    expect(slack.got).toHaveLength(1);
    expect(slack.got[0]?.verified).toBe(true);
    expect(JSON.parse(slack.got[0]?.body ?? '')).toEqual({
      text: `api (${project.name}) is Online.`,
    });
  });

  it('sends nothing for an event whose transaction rolled back', async () => {
    const { receiver, base, project } = await endpointFor(['frame.online']);
    const space = await defaultSpace(t, ann, project.id);
    const frame = await newFrame(t, ann, project.id, space);
    const online = { status: 'Online', reason: null, previous_status: 'Starting' };
    await expect(
      transaction(t.db, async (trx) => {
        await notifyOfFrame(trx, frame.id, t.clock.now(), 'frame.online', online);
        throw new Error('the change failed after its event');
      }),
    ).rejects.toThrow('the change failed');
    expect(await deliveries(base)).toEqual([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n
      from graphile_worker.jobs where task_identifier = 'deliver_notification'
      and key not in (select id from notification_deliveries)`.execute(t.db);
    expect(rows[0]?.n).toBe(0);
    // The same call, committed, is sent.
    await transaction(t.db, (trx) =>
      notifyOfFrame(trx, frame.id, t.clock.now(), 'frame.online', online),
    );
    await receiver.until(1);
    expect(receiver.events().map((e) => e.type)).toEqual(['frame.online']);
  });

  it('removes an endpoint while a try is in flight, once the try is over', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let arrived = false;
    const project = await newProject(t, ann, 'Slow');
    const slow = await startReceiver({
      hold: () => {
        arrived = true;
        return held;
      },
    });
    receivers.push(slow);
    const made = await t.post(`/v2/projects/${project.id}/notifications`, {
      token: ann.token,
      body: { url: slow.url, events: ['deploy.started'] },
    });
    const base = `/v2/projects/${project.id}/notifications/${made.json.id}`;
    // An automatic delivery: its try also moves the endpoint's failure streak when it ends.
    await newFrame(t, ann, project.id, await defaultSpace(t, ann, project.id));
    await waitFor('the try to reach the receiver', () => arrived);
    const removing = t.del(base, { token: ann.token });
    setTimeout(release, 300);
    expect((await removing).status).toBe(204);
    const left = await t.db
      .selectFrom('notification_deliveries')
      .select('id')
      .where('endpoint_id', '=', made.json.id)
      .execute();
    expect(left).toEqual([]);
    expect((await t.get(base, { token: ann.token })).status).toBe(404);
  });
});
