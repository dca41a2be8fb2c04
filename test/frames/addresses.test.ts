// Addresses (CONTRACT 5b): every frame's hostname, made at creation and kept for good, and its
// url, which follows what its agent last said of its edge in a sync; the agents are told each
// frame's hostname and whether it is suspended, and their state digest moves with both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, testAppOn, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { ADMIN, cloudAgent, defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';
import { insertFrame } from '../../src/frames/frames-dal.ts';
import { newId } from '../../src/ids.ts';

// Any case and a trailing dot: kept lower-cased without it.
const APPS_DOMAIN = 'Apps.Example.TEST.';
const DOMAIN = 'apps.example.test';

let t: TestApp;
let ann: TestUser;
let project: { id: string };
let space: string;

beforeAll(async () => {
  t = await testApp({ env: { APPS_DOMAIN } });
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
  await cloudAgent(t);
});
afterAll(async () => {
  await t.close();
});

type Frame = { id: string; project_id: string; space_id: string; hostname: string; url: any };
const idPart = (id: string) => id.slice(-6).toLowerCase();
const read = async (f: Frame, user = ann) => {
  const r = await t.get(framePath(f), { token: user.token });
  expect(r.status, r.text).toBe(200);
  return r.json as Frame;
};
async function selfHosted(name: string) {
  const r = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name },
  });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; token: string };
}
const edgeOf = (agentId: string) =>
  t.db
    .selectFrom('agents')
    .select(['edge_http_port', 'edge_https_port', 'edge_reported'])
    .where('id', '=', agentId)
    .executeTakeFirstOrThrow();

describe('a frame’s hostname', () => {
  it('is made at creation of its name and id, under APPS_DOMAIN; a rename keeps it', async () => {
    const f = (await newFrame(t, ann, project.id, space, { name: 'My Shop!' })) as Frame;
    const hostname = `my-shop-${idPart(f.id)}.${DOMAIN}`;
    expect(f.hostname).toBe(hostname);
    // Its cloud agent never said it has an edge.
    expect(f.url).toBeNull();

    const renamed = await t.patch(framePath(f), { token: ann.token, body: { name: 'Other' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.json).toMatchObject({ name: 'Other', hostname });
    expect((await read(f)).hostname).toBe(hostname);
    const list = await t.get(`/v2/projects/${project.id}/frames`, { token: ann.token });
    expect(list.json.data.find((x: Frame) => x.id === f.id).hostname).toBe(hostname);
  });

  it('is unique across same-named frames of other projects; it goes with its frame', async () => {
    const bob = await newUser(t, 'bob');
    const bobs = await newProject(t, bob);
    const spaceOfBob = await defaultSpace(t, bob, bobs.id);
    const mine = (await newFrame(t, ann, project.id, space, { name: 'api' })) as Frame;
    const his = (await newFrame(t, bob, bobs.id, spaceOfBob, { name: 'api' })) as Frame;
    expect(mine.hostname).toBe(`api-${idPart(mine.id)}.${DOMAIN}`);
    expect(his.hostname).toBe(`api-${idPart(his.id)}.${DOMAIN}`);
    expect(his.hostname).not.toBe(mine.hostname);

    expect((await t.del(framePath(his), { token: bob.token })).status).toBe(200);
    const left = await t.db
      .selectFrom('frames')
      .select('id')
      .where('hostname_label', '=', `api-${idPart(his.id)}`)
      .execute();
    expect(left).toEqual([]);
  });

  it('taken already, is made again from a new id: a create never fails for it', async () => {
    const f = (await newFrame(t, ann, project.id, space, { name: 'twin' })) as Frame;
    const row = await t.db
      .selectFrom('frames')
      .selectAll()
      .where('id', '=', f.id)
      .executeTakeFirstOrThrow();
    const {
      id: _id,
      hostname_label: _label,
      replicas: _r,
      latest_deployment: _d,
      serving_deployment: _s,
      last_event_id: _e,
      ...settings
    } = row;
    // An id of its own whose last 6 characters are the frame's: the same label.
    const twin = `frm_${'0'.repeat(20)}${f.id.slice(-6)}`;
    const fresh = newId('frame');
    const ids = [twin, fresh];
    const made = await insertFrame(t.db, () => ids.shift() as string, settings);
    expect(made.id).toBe(fresh);
    expect(made.hostname_label).toBe(`twin-${idPart(fresh)}`);

    // A label that stays taken try after try is an error, not a frame without one.
    await expect(insertFrame(t.db, () => twin, settings)).rejects.toThrow(/no free hostname/);
  });
});

describe('a frame’s url', () => {
  it('follows what its agent last said of its edge, read after read', async () => {
    const agent = await selfHosted('rack-url');
    const f = (await newFrame(t, ann, project.id, space, { agent_id: agent.id })) as Frame;
    const h = f.hostname;
    // Read twice: the second read remembers the frame's row (frame-rows.ts).
    expect([(await read(f)).url, (await read(f)).url]).toEqual([null, null]);
    expect(await edgeOf(agent.id)).toEqual({
      edge_http_port: null,
      edge_https_port: null,
      edge_reported: false,
    });

    const cases: Array<[unknown, string | null]> = [
      [{ http_port: 8000, https_port: null }, `http://${h}:8000`],
      [{ http_port: 80, https_port: null }, `http://${h}`],
      // This service has no ACME: an HTTPS port of the agent has no certificates to serve
      // (test/certificates/ has the https urls of a service with ACME).
      [{ http_port: 80, https_port: 443 }, `http://${h}`],
      [{ http_port: 8000, https_port: 8443 }, `http://${h}:8000`],
      [null, null],
      [{ http_port: 8000, https_port: null }, `http://${h}:8000`],
    ];
    for (const [edge, url] of cases) {
      await sync(t, agent.token, { edge });
      expect((await read(f)).url, JSON.stringify(edge)).toBe(url);
      expect((await read(f)).url, JSON.stringify(edge)).toBe(url);
    }
    // A sync that does not say keeps what was said; a report may say it too.
    await sync(t, agent.token);
    expect((await read(f)).url).toBe(`http://${h}:8000`);
    const events = [{ frame_id: f.id, replica: 0, type: 'pulling' }];
    await sync(t, agent.token, { events, edge: null });
    expect((await read(f)).url).toBeNull();
    expect(await edgeOf(agent.id)).toEqual({
      edge_http_port: null,
      edge_https_port: null,
      edge_reported: true,
    });

    // The answer remembered for the frame is made again when only its agent's edge moved, its
    // last call not (frame-rows.ts answer): here without a sync, as by an operator's hand.
    expect((await read(f)).url).toBeNull();
    await t.db
      .updateTable('agents')
      .set({ edge_http_port: 9000 })
      .where('id', '=', agent.id)
      .execute();
    expect((await read(f)).url).toBe(`http://${h}:9000`);
  });

  it('is in every answer of a frame: create, get, list, update, stop and start', async () => {
    const agent = await selfHosted('rack-answers');
    await sync(t, agent.token, { edge: { http_port: 8000, https_port: null } });
    const f = (await newFrame(t, ann, project.id, space, {
      agent_id: agent.id,
      name: 'shop',
    })) as Frame;
    const address = { hostname: f.hostname, url: `http://${f.hostname}:8000` };
    expect(f).toMatchObject(address);
    expect(await read(f)).toMatchObject(address);
    const list = await t.get(`/v2/projects/${project.id}/spaces/${space}/frames`, {
      token: ann.token,
    });
    expect(list.json.data.find((x: Frame) => x.id === f.id)).toMatchObject(address);
    const patched = await t.patch(framePath(f), { token: ann.token, body: { replica_count: 2 } });
    expect(patched.json).toMatchObject(address);
    for (const op of ['stop', 'start', 'stop', 'start']) {
      const r = await t.post(`${framePath(f)}/${op}`, { token: ann.token });
      expect(r.status, r.text).toBe(202);
      expect(r.json, op).toMatchObject(address);
    }
  });
});

describe('the agent’s desired state', () => {
  type Told = { state: string; frames: Array<Record<string, any>> };
  const toldOf = (told: Told, frameId: string) => told.frames.find((x) => x.frame_id === frameId);

  it('gives each frame its hostname and `suspended`; the digest moves with both', async () => {
    const agent = await selfHosted('rack-state');
    const f = (await newFrame(t, ann, project.id, space, { agent_id: agent.id })) as Frame;
    const active = (await sync(t, agent.token)) as unknown as Told;
    expect(toldOf(active, f.id)).toMatchObject({
      hostname: f.hostname,
      suspended: false,
      desired_state: 'running',
    });

    const billing = (status: string) =>
      t.put(`/v2/admin/users/${ann.id}/billing`, { token: ADMIN, body: { status } });
    expect((await billing('past_due')).status).toBe(200);
    const suspended = (await sync(t, agent.token, {
      known_state: active.state,
    })) as unknown as Told;
    expect(suspended.state).not.toBe(active.state);
    expect(toldOf(suspended, f.id)).toMatchObject({ suspended: true, desired_state: 'stopped' });
    expect((await billing('active')).status).toBe(200);
    const restored = (await sync(t, agent.token, {
      known_state: suspended.state,
    })) as unknown as Told;
    expect(restored.state).not.toBe(suspended.state);
    expect(toldOf(restored, f.id)).toMatchObject({ suspended: false, desired_state: 'running' });
  });

  it('under another APPS_DOMAIN has other hostnames and another digest', async () => {
    const agent = await selfHosted('rack-domain');
    const f = (await newFrame(t, ann, project.id, space, { agent_id: agent.id })) as Frame;
    const other = await testAppOn(t.url, { env: { APPS_DOMAIN: 'other.test' } });
    try {
      const here = (await sync(t, agent.token)) as unknown as Told;
      const there = (await sync(other, agent.token, {
        known_state: here.state,
      })) as unknown as Told;
      expect(there.state).not.toBe(here.state);
      expect(toldOf(there, f.id)?.hostname).toBe(`${f.hostname.split('.')[0]}.other.test`);
      expect((await other.get(framePath(f), { token: ann.token })).json.hostname).toBe(
        toldOf(there, f.id)?.hostname,
      );
    } finally {
      await other.close();
    }
  });

  it('refuses an edge that is not one (422), and changes nothing', async () => {
    const agent = await selfHosted('rack-bad-edge');
    await sync(t, agent.token, { edge: { http_port: 8000, https_port: null } });
    for (const edge of [
      { http_port: 0, https_port: null },
      { http_port: 8000 },
      { http_port: 8000, https_port: 70000 },
      { http_port: 8000, https_port: null, host: 'x' },
      8000,
    ]) {
      const r = await t.post('/v2/agent/sync', { token: agent.token, body: { edge } });
      expectProblem(r, 422);
    }
    expect(await edgeOf(agent.id)).toMatchObject({ edge_http_port: 8000, edge_reported: true });
  });
});
