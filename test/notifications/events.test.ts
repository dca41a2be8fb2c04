// Every event from where it happens, through the real paths: an agent's reports (deployments,
// status, the back-off), a start that finds its replicas healthy (the stop/start path), the
// operator's billing, a verified domain, and a team's members joining and leaving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFICATION_EVENTS } from '../../src/notifications/events.ts';
import { type TestApp, testApp } from '../helpers/app.ts';
import { verifiedDomain } from '../helpers/domains.ts';
import {
  invitationToken,
  newProject,
  newTeam,
  newUser,
  type TestUser,
} from '../helpers/factories.ts';
import {
  ADMIN,
  cloudAgent,
  defaultSpace,
  framePath,
  newFrame,
  replicaEvents,
  serveAt,
  sync,
  toldOf,
} from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Receiver, startReceiver } from './receiver.ts';

let t: TestApp;
let receiver: Receiver;
let ann: TestUser;
let project: { id: string; name: string };
let agent: { id: string; token: string };
let space: string;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await testApp({
    worker: true,
    env: { NOTIFICATIONS_ALLOW_PRIVATE_ADDRESSES: 'true', NOTIFICATIONS_ALLOW_HTTP: 'true' },
  });
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann, 'Events');
  const r = await t.post(`/v2/projects/${project.id}/notifications`, {
    token: ann.token,
    body: { url: receiver.url, events: [...NOTIFICATION_EVENTS] },
  });
  expect(r.status, r.text).toBe(201);
  agent = await cloudAgent(t, 'events');
  space = await defaultSpace(t, ann, project.id);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** The events received since `from`, once there are `n` of them (in the order received). */
async function next(from: number, n: number) {
  await receiver.until(from + n);
  return receiver.events().slice(from);
}

async function placedFrame(name: string) {
  const frame = await newFrame(t, ann, project.id, space, { name });
  await t.db.updateTable('frames').set({ agent_id: agent.id }).where('id', '=', frame.id).execute();
  return frame;
}

const types = (events: any[]) => events.map((e) => e.type).sort();

/** The first event since `from` that `match` accepts (others may arrive in between). */
async function first(from: number, what: string, match: (e: any) => boolean) {
  return waitFor(what, () => receiver.events().slice(from).find(match));
}

describe('events', { timeout: 60_000 }, () => {
  it('tell of deployments and of the frame going online, and of a failed build', async () => {
    const from = receiver.got.length;
    const frame = await placedFrame('web');
    await serveAt(t, agent.token, frame.id, 'a'.repeat(40));
    const got = await next(from, 3);
    expect(types(got)).toEqual(['deploy.started', 'deploy.succeeded', 'frame.online']);
    const online = got.find((e) => e.type === 'frame.online');
    expect(online.data).toMatchObject({
      frame: { id: frame.id, name: 'web' },
      status: 'Online',
      previous_status: 'Starting',
    });

    const deploy = await t.post(`${framePath(frame)}/deploy`, { token: ann.token });
    expect(deploy.status, deploy.text).toBe(202);
    const told = await toldOf(t, agent.token, frame.id);
    await sync(t, agent.token, {
      builds: [{ deployment_id: told.deployment_id, state: 'failed', message: 'npm ERR! 42' }],
    });
    // (A real agent reports the serving replicas under the new generation; this one does not,
    // so the frame also goes Error: build_failed, as a first deploy's would.)
    await waitFor('the failed deploy', () =>
      receiver.events().some((e) => e.type === 'deploy.failed'),
    );
    // Deliveries run side by side: the order they arrive in is not the order of the events.
    const later = receiver.events().slice(from + 3);
    expect(later.map((e) => e.type)).toEqual(
      expect.arrayContaining(['deploy.started', 'deploy.failed']),
    );
    expect(later.find((e) => e.type === 'deploy.failed').data.deployment).toMatchObject({
      id: deploy.json.id,
      status: 'failed',
      failure_reason: 'build_failed',
      failure_message: 'npm ERR! 42',
    });
  });

  it('tell of a crash loop: Error, then the back-off trip', async () => {
    const frame = await placedFrame('crashy');
    const told = await toldOf(t, agent.token, frame.id);
    for (let i = 0; i < 5; i++)
      await sync(t, agent.token, {
        events: replicaEvents(frame.id, 1, 'crashed', { generation: told.generation }),
      });
    await waitFor('the back-off to trip', () =>
      receiver.events().some((e) => e.type === 'frame.backoff_tripped'),
    );
    const got = receiver.events().filter((e) => e.data.frame?.id === frame.id);
    expect(got.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'deploy.started',
        'frame.error',
        'deploy.failed',
        'frame.backoff_tripped',
      ]),
    );
    expect(got.find((e) => e.type === 'frame.error').data).toMatchObject({ reason: 'crash' });
    // The crash failed the deployment in progress; the trip then found none left.
    expect(got.find((e) => e.type === 'deploy.failed').data.deployment).toMatchObject({
      failure_reason: 'crash',
    });
    expect(got.find((e) => e.type === 'frame.backoff_tripped').data.detail).toEqual({
      crash_streak: 5,
    });
  });

  it('tell of a start that finds its replicas healthy (the stop/start path)', async () => {
    const frame = await placedFrame('again');
    await serveAt(t, agent.token, frame.id, 'b'.repeat(40));
    await waitFor('its first Online', () =>
      receiver.events().some((e) => e.type === 'frame.online' && e.data.frame.id === frame.id),
    );
    const from = receiver.got.length;
    expect((await t.post(`${framePath(frame)}/stop`, { token: ann.token })).json.status).toBe(
      'Stopped',
    );
    const started = await t.post(`${framePath(frame)}/start`, { token: ann.token });
    expect(started.json.status).toBe('Online');
    const online = await first(from, 'its Online again', (e) => e.data.frame?.id === frame.id);
    expect(online).toMatchObject({
      type: 'frame.online',
      data: { frame: { id: frame.id }, previous_status: 'Stopped' },
    });
  });

  it('tell of a suspension and of a verified domain', async () => {
    const from = receiver.got.length;
    const frame = await placedFrame('billed');
    await verifiedDomain(t, ann.token, frame, 'shop.example.com');
    const domain = await first(from, 'the domain', (e) => e.type === 'domain.verified');
    expect(domain).toMatchObject({
      type: 'domain.verified',
      data: { frame: { id: frame.id }, domain: { hostname: 'shop.example.com' } },
    });
    const bill = await t.put(`/v2/admin/users/${ann.id}/billing`, {
      token: ADMIN,
      body: { status: 'past_due' },
    });
    expect(bill.status, bill.text).toBe(200);
    await waitFor('every frame to be told Suspended', () =>
      receiver.events().some((e) => e.type === 'frame.suspended' && e.data.frame.id === frame.id),
    );
    await t.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status: 'active' } });
  });

  it('tell of members joining and leaving a team the project is shared with', async () => {
    const team = await newTeam(t, ann, 'Ops');
    const grant = await t.post(`/v2/teams/${team.id}/grants`, {
      token: ann.token,
      body: { project_id: project.id, role: 'member' },
    });
    expect(grant.status, grant.text).toBe(201);
    const bob = await newUser(t, 'bob');
    const from = receiver.got.length;
    const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'admin' },
    });
    expect(inv.status, inv.text).toBe(201);
    const token = await invitationToken(t, bob.email);
    const accepted = await t.post(`/v2/teams/invitations/${token}/accept`, { token: bob.token });
    expect(accepted.status, accepted.text).toBe(200);
    const added = await first(from, 'member.added', (e) => e.type === 'member.added');
    expect(added).toMatchObject({
      type: 'member.added',
      project: { id: project.id },
      data: {
        user: { id: bob.id, email: bob.email },
        via: { kind: 'team', id: team.id, name: 'Ops', role: 'admin' },
      },
    });
    const removed = await t.del(`/v2/teams/${team.id}/members/${bob.id}`, { token: ann.token });
    expect(removed.status, removed.text).toBe(204);
    const gone = await first(from, 'member.removed', (e) => e.type === 'member.removed');
    expect(gone).toMatchObject({ data: { user: { id: bob.id }, via: { id: team.id } } });
  });
});
