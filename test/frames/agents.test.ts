// Agents and the frame API around them (CONTRACT 5, 6 and 7): self-hosted agent registration,
// the offline rule for stop/start (503 agent_offline), cloud placement, token separation, the
// long-poll sync, ?wait_for on a frame read, ETag / If-Match, field and port validation, and
// which settings changes re-roll a frame.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import {
  ADMIN,
  defaultSpace,
  framePath,
  newFrame,
  replicaEvents,
  sync,
} from '../helpers/frames.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
let ann: TestUser; // owns the project
let bob: TestUser; // member of the project through a team
let carol: TestUser; // no access
let project: { id: string };
let space: string;

beforeAll(async () => {
  t = await testApp();
  ann = await newUser(t, 'ann');
  bob = await newUser(t, 'bob');
  carol = await newUser(t, 'carol');
  project = await newProject(t, ann);
  space = await defaultSpace(t, ann, project.id);
  const team = await newTeam(t, ann);
  await addMember(t, team.id, bob, 'member');
  await share(t, team.id, project.id, 'admin'); // bob: lower of member and admin = member
});
afterAll(async () => {
  await t.close();
});

const agentsPath = (projectId: string) => `/v2/projects/${projectId}/agents`;
async function selfHosted(name = 'edge', projectId = project.id, token = ann.token) {
  const r = await t.post(agentsPath(projectId), { token, body: { name } });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; token: string; name: string };
}
const advance = async (seconds: number) => {
  const r = await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } });
  expect(r.status, r.text).toBe(200);
};
const read = async (f: { id: string; project_id: string; space_id: string }, query = '') => {
  const r = await t.get(`${framePath(f)}${query}`, { token: ann.token });
  expect(r.status, r.text).toBe(200);
  return r;
};
const deploymentsOf = async (f: { id: string; project_id: string; space_id: string }) =>
  (await t.get(`${framePath(f)}/deployments`, { token: ann.token })).json.data as Array<{
    id: string;
    trigger: string;
    status: string;
  }>;

describe('self-hosted agent registration', () => {
  it('an admin registers one (201, token shown once); the list never shows the token', async () => {
    const r = await t.post(agentsPath(project.id), { token: ann.token, body: { name: 'rack-1' } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      name: 'rack-1',
      kind: 'self_hosted',
      project_id: project.id,
      online: false,
      last_seen_at: null,
    });
    expect(r.json.id).toMatch(/^agt_/);
    expect(typeof r.json.token).toBe('string');
    expect(r.json.token.length).toBeGreaterThanOrEqual(20);
    // How to run it elsewhere: the package this service serves, never the public registry.
    const pkg = `${t.config.publicUrl}/downloads/frameplane.tgz`;
    expect(r.json.install).toEqual({
      package_url: pkg,
      checksum_url: `${pkg}.sha256`,
      command: `npm install -g ${pkg} && FRAMEPLANE_AGENT_TOKEN=${r.json.token} frameplane agent --server ${t.config.publicUrl}`,
    });

    const list = await t.get(agentsPath(project.id), { token: ann.token });
    expect(list.status).toBe(200);
    const listed = list.json.data.find((a: any) => a.id === r.json.id);
    expect(listed).toMatchObject({ name: 'rack-1', online: false, last_seen_at: null });
    expect(listed).not.toHaveProperty('token');
    expect(list.text).not.toContain(r.json.token);
    expect(list.json).toHaveProperty('next_cursor');

    // The token works, once: the agent is online after its first sync.
    expect((await sync(t, r.json.token)).frames).toEqual([]);
    const after = (await t.get(agentsPath(project.id), { token: ann.token })).json.data.find(
      (a: any) => a.id === r.json.id,
    );
    expect(after.online).toBe(true);
    expect(Date.parse(after.last_seen_at)).not.toBeNaN();
  });

  it('a member may list but not register (403); an outsider gets 404; no token 401', async () => {
    expectProblem(
      await t.post(agentsPath(project.id), { token: bob.token, body: { name: 'nope' } }),
      403,
    );
    expect((await t.get(agentsPath(project.id), { token: bob.token })).status).toBe(200);
    expectProblem(
      await t.post(agentsPath(project.id), { token: carol.token, body: { name: 'nope' } }),
      404,
    );
    expectProblem(await t.get(agentsPath(project.id), { token: carol.token }), 404);
    expectProblem(await t.post(agentsPath(project.id), { body: { name: 'nope' } }), 401);
  });
});

describe('frames on a self-hosted agent', () => {
  it('are created with agent_id; an agent of another project is refused', async () => {
    const agent = await selfHosted();
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id });
    expect(f).toMatchObject({
      runtime: { kind: 'agent', agent_id: agent.id },
      agent_id: agent.id,
      desired_state: 'running',
    });
    expect((await sync(t, agent.token)).frames.map((x) => x.frame_id)).toEqual([f.id]);

    const other = await newProject(t, carol);
    const foreign = await selfHosted('foreign', other.id, carol.token);
    const r = await t.post(`/v2/projects/${project.id}/spaces/${space}/frames`, {
      token: ann.token,
      body: {
        name: 'x',
        owner_id: ann.id,
        git_repository: 'app',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port: 8080,
        agent_id: foreign.id,
      },
    });
    expectProblem(r, 422);
    expect(r.json.errors.map((e: any) => e.path)).toContain('agent_id');
  });

  it('stop and start answer 503 agent_offline while the agent never synced, and work right after a sync', async () => {
    const agent = await selfHosted('never');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id });
    for (const op of ['stop', 'start']) {
      const r = await t.post(`${framePath(f)}/${op}`, { token: ann.token });
      expectProblem(r, 503, 'agent_offline');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(r.json.detail).toMatch(/last seen/i);
      expect(r.json.detail).toMatch(/never/i);
    }
    expect((await read(f)).json.desired_state).toBe('running');
    const recorded = await t.db
      .selectFrom('frame_events')
      .select('type')
      .where('frame_id', '=', f.id)
      .where('type', 'in', ['stop', 'start'])
      .execute();
    expect(recorded).toEqual([]);

    await sync(t, agent.token);
    const stop = await t.post(`${framePath(f)}/stop`, { token: ann.token });
    expect(stop.status, stop.text).toBe(202);
    expect(stop.json.desired_state).toBe('stopped');
    const start = await t.post(`${framePath(f)}/start`, { token: ann.token });
    expect(start.status, start.text).toBe(202);
    expect(start.json.desired_state).toBe('running');
  });

  it(`answer 503 once the last sync is older than AGENT_OFFLINE_AFTER_SECONDS (30 s), with when it was last seen`, async () => {
    const agent = await selfHosted('flaky');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id });
    await sync(t, agent.token);
    const seen = (await t.get(agentsPath(project.id), { token: ann.token })).json.data.find(
      (a: any) => a.id === agent.id,
    ).last_seen_at as string;

    await advance(31);
    expect((await read(f)).json.agent_online).toBe(false);
    expect(
      (await t.get(agentsPath(project.id), { token: ann.token })).json.data.find(
        (a: any) => a.id === agent.id,
      ).online,
    ).toBe(false);
    for (const op of ['stop', 'start']) {
      const r = await t.post(`${framePath(f)}/${op}`, { token: ann.token });
      expectProblem(r, 503, 'agent_offline');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(r.json.detail).toMatch(/last seen/i);
      expect(r.json.detail).toContain(seen);
    }
    expect((await read(f)).json.desired_state).toBe('running');

    await sync(t, agent.token);
    expect((await t.post(`${framePath(f)}/stop`, { token: ann.token })).status).toBe(202);
    expect((await read(f)).json).toMatchObject({ desired_state: 'stopped', agent_online: true });
  });
});

describe('cloud frames', () => {
  // A database of their own: here no cloud agent exists until the operator registers one.
  let c: TestApp;
  let owner: TestUser;
  let prj: { id: string };
  let spc: string;
  beforeAll(async () => {
    c = await testApp();
    owner = await newUser(c, 'owner');
    prj = await newProject(c, owner);
    spc = await defaultSpace(c, owner, prj.id);
  });
  afterAll(async () => {
    await c.close();
  });

  it('never answer 503, with no cloud agent at all; are placed on the least loaded cloud agent once the operator registers them', async () => {
    const f1 = await newFrame(c, owner, prj.id, spc, { name: 'one' });
    const f2 = await newFrame(c, owner, prj.id, spc, { name: 'two' });
    expect(f1).toMatchObject({ runtime: { kind: 'cloud' }, agent_id: null, status: 'Starting' });
    const stop = await c.post(`${framePath(f1)}/stop`, { token: owner.token });
    expect(stop.status, stop.text).toBe(202);
    expect(stop.json.desired_state).toBe('stopped');
    const start = await c.post(`${framePath(f1)}/start`, { token: owner.token });
    expect(start.status, start.text).toBe(202);
    expect((await c.post(`${framePath(f2)}/stop`, { token: owner.token })).status).toBe(202);

    const a = await c.post('/v2/admin/agents', { token: ADMIN, body: { name: 'cloud-a' } });
    expect(a.status, a.text).toBe(201);
    expect(a.json).toMatchObject({ kind: 'cloud', project_id: null, name: 'cloud-a' });
    expect(typeof a.json.token).toBe('string');
    for (const f of [f1, f2])
      expect((await c.get(framePath(f), { token: owner.token })).json).toMatchObject({
        agent_id: a.json.id,
        runtime: { kind: 'cloud' },
      });
    const told = Object.fromEntries(
      (await sync(c, a.json.token)).frames.map((x) => [x.frame_id, x.desired_state]),
    );
    expect(told).toEqual({ [f1.id]: 'running', [f2.id]: 'stopped' });

    // A second cloud agent, empty: new cloud frames go to it until the load is even.
    const b = await c.post('/v2/admin/agents', { token: ADMIN, body: { name: 'cloud-b' } });
    expect(b.status).toBe(201);
    const f3 = await newFrame(c, owner, prj.id, spc, { name: 'three' });
    expect(f3.agent_id).toBe(b.json.id);
    const f4 = await newFrame(c, owner, prj.id, spc, { name: 'four' });
    expect(f4.agent_id).toBe(b.json.id);
    const f5 = await newFrame(c, owner, prj.id, spc, { name: 'five' });
    expect([a.json.id, b.json.id]).toContain(f5.agent_id);
    expect((await sync(c, b.json.token)).frames.map((x) => x.frame_id).sort()).toEqual(
      [f3.id, f4.id, ...(f5.agent_id === b.json.id ? [f5.id] : [])].sort(),
    );

    // cloud-b never synced and cloud-a's last sync is long past: cloud frames still never wait.
    await c.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: 120 } });
    for (const f of [f1, f3])
      expect((await c.post(`${framePath(f)}/stop`, { token: owner.token })).status).toBe(202);
    for (const f of [f1, f3])
      expect((await c.post(`${framePath(f)}/start`, { token: owner.token })).status).toBe(202);
  });
});

describe('tokens are not interchangeable', () => {
  it('a user token on /v2/agent/sync is 401, an agent token on /v2/user is 401', async () => {
    const agent = await selfHosted('tokens');
    const r1 = await t.post('/v2/agent/sync', { token: ann.token, body: {} });
    expectProblem(r1, 401);
    expect(String(r1.headers['www-authenticate'])).toMatch(/^Bearer/);
    const r2 = await t.get('/v2/user', { token: agent.token });
    expectProblem(r2, 401);
    expect(String(r2.headers['www-authenticate'])).toMatch(/^Bearer/);
    expectProblem(await t.get(agentsPath(project.id), { token: agent.token }), 401);
    expectProblem(await t.post('/v2/agent/sync', { token: ADMIN, body: {} }), 401);
    expect((await t.get('/v2/user', { token: ann.token })).status).toBe(200);
  });
});

describe('the long-poll sync', () => {
  it('?wait=20 answers promptly (well before its timeout) after a stop made by another request', async () => {
    const agent = await selfHosted('poller');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id });
    const first = await sync(t, agent.token);
    expect(first.frames[0]).toMatchObject({ frame_id: f.id, desired_state: 'running' });

    const started = Date.now();
    const waiting = t.post('/v2/agent/sync?wait=20', { token: agent.token, body: {} });
    await t.untilHolding('frameplane_agent', agent.id, 'the long poll');
    const stop = await t.post(`${framePath(f)}/stop`, { token: ann.token });
    expect(stop.status, stop.text).toBe(202);
    const answer = await waiting;
    const elapsed = Date.now() - started;
    expect(answer.status, answer.text).toBe(200);
    // Half the wait: woken by the stop, not by the timeout, however loaded the machine.
    expect(elapsed).toBeLessThan(10_000);
    expect(answer.json.frames.find((x: any) => x.frame_id === f.id)).toMatchObject({
      desired_state: 'stopped',
    });
    expect(answer.json.frames[0].generation).toBeGreaterThan(at(first.frames, 0).generation);
  });

  it('?wait=2 with no change answers after about two seconds with the same state', async () => {
    const agent = await selfHosted('idle');
    await newFrame(t, ann, project.id, space, { agent_id: agent.id });
    const now = await sync(t, agent.token);
    const started = Date.now();
    const held = await sync(t, agent.token, {}, 2);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1800);
    expect(elapsed).toBeLessThan(15_000);
    expect(held.frames).toEqual(now.frames);
  });
});

describe('an agent only sees its own frames', () => {
  it('in its answer, and its reports about other frames are ignored', async () => {
    const one = await selfHosted('one');
    const two = await selfHosted('two');
    const other = await newProject(t, carol);
    const otherSpace = await defaultSpace(t, carol, other.id);
    const three = await selfHosted('three', other.id, carol.token);
    const f1 = await newFrame(t, ann, project.id, space, { agent_id: one.id, name: 'f1' });
    const f2 = await newFrame(t, ann, project.id, space, { agent_id: two.id, name: 'f2' });
    const f3 = await newFrame(t, carol, other.id, otherSpace, { agent_id: three.id, name: 'f3' });
    const ids = async (token: string) => (await sync(t, token)).frames.map((x) => x.frame_id);
    expect(await ids(one.token)).toEqual([f1.id]);
    expect(await ids(two.token)).toEqual([f2.id]);
    expect(await ids(three.token)).toEqual([f3.id]);

    // Agent one reports on f2 and f3: nothing of it lands.
    const answer = await sync(t, one.token, {
      events: [...replicaEvents(f2.id, 1, 'crashed'), ...replicaEvents(f3.id, 1, 'healthy')],
      logs: [{ frame_id: f2.id, replica: 0, at: new Date().toISOString(), line: 'not yours' }],
    });
    expect(answer.frames.map((x) => x.frame_id)).toEqual([f1.id]);
    const f2read = (await read(f2)).json;
    expect(f2read).toMatchObject({
      replicas: [],
      status: 'Starting',
      backoff: { crash_streak: 0 },
    });
    const f3read = (await t.get(framePath(f3), { token: carol.token })).json;
    expect(f3read).toMatchObject({ replicas: [], status: 'Starting' });
    expect(
      await t.db.selectFrom('frame_logs').select('id').where('frame_id', '=', f2.id).execute(),
    ).toEqual([]);
  });
});

describe('deleting an agent', () => {
  it('is refused with 409 agent_in_use while frames run on it, and works once they are gone', async () => {
    const agent = await selfHosted('busy');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id });
    const path = `${agentsPath(project.id)}/${agent.id}`;
    expectProblem(await t.del(path, { token: bob.token }), 403);
    expectProblem(await t.del(path, { token: ann.token }), 409, 'agent_in_use');
    expect((await sync(t, agent.token)).frames).toHaveLength(1);
    expect((await t.del(framePath(f), { token: ann.token })).status).toBe(200);
    expect((await t.del(path, { token: ann.token })).status).toBe(204);
    expectProblem(await t.post('/v2/agent/sync', { token: agent.token, body: {} }), 401);
    expect(
      (await t.get(agentsPath(project.id), { token: ann.token })).json.data.map((a: any) => a.id),
    ).not.toContain(agent.id);
    expectProblem(await t.del(path, { token: ann.token }), 404);
  });
});

describe('GET a frame with ?wait_for', () => {
  it('answers as soon as the agent reports every replica healthy', async () => {
    const agent = await selfHosted('waiter');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id, replica_count: 2 });
    await sync(t, agent.token, { events: replicaEvents(f.id, 2, 'starting') });
    const started = Date.now();
    const waiting = t.get(`${framePath(f)}?wait_for=Online&timeout=20`, { token: ann.token });
    await t.untilHolding('frameplane_frame_events', f.id, 'the GET ?wait_for');
    await sync(t, agent.token, { events: replicaEvents(f.id, 2, 'healthy') });
    const r = await waiting;
    // Half the timeout: woken by the report, however loaded the machine.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('Online');
    expect(r.headers.etag).toBeTruthy();
    // Already there: at once.
    const again = Date.now();
    expect((await read(f, '?wait_for=Online&timeout=20')).json.status).toBe('Online');
    expect(Date.now() - again).toBeLessThan(10_000);
  });

  it('otherwise answers the current state when the timeout passes', async () => {
    const agent = await selfHosted('slow');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id, replica_count: 2 });
    await sync(t, agent.token, {
      events: [
        { frame_id: f.id, replica: 0, type: 'healthy' },
        { frame_id: f.id, replica: 1, type: 'crashed' },
      ],
    });
    const started = Date.now();
    const r = await read(f, '?wait_for=Online&timeout=2');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1800);
    expect(elapsed).toBeLessThan(15_000);
    expect(r.json).toMatchObject({ status: 'Degraded', status_reason: 'crash' });
  });
});

describe('ETag and If-Match', () => {
  it('a stale ETag is 412 precondition_failed, the current one is honoured', async () => {
    const f = await newFrame(t, ann, project.id, space, { name: 'etag' });
    const first = await read(f);
    const stale = first.headers.etag as string;
    expect(stale).toMatch(/^"/);
    const moved = await t.patch(framePath(f), { token: ann.token, body: { name: 'etag-2' } });
    expect(moved.status, moved.text).toBe(200);
    const current = moved.headers.etag as string;
    expect(current).not.toBe(stale);
    expect((await read(f)).headers.etag).toBe(current);

    const refused = await t.patch(framePath(f), {
      token: ann.token,
      body: { name: 'lost-update' },
      headers: { 'if-match': stale },
    });
    expectProblem(refused, 412, 'precondition_failed');
    expect((await read(f)).json.name).toBe('etag-2');

    const ok = await t.patch(framePath(f), {
      token: ann.token,
      body: { name: 'etag-3' },
      headers: { 'if-match': current },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.name).toBe('etag-3');
    expect(ok.headers.etag).not.toBe(current);
    expect((await read(f)).headers.etag).toBe(ok.headers.etag);
  });
});

describe('validation', () => {
  it('PATCH with git_repository is 422 naming the field and suggesting git_repository_name', async () => {
    const f = await newFrame(t, ann, project.id, space, { name: 'rename-field' });
    const r = await t.patch(framePath(f), { token: ann.token, body: { git_repository: 'other' } });
    expectProblem(r, 422);
    const err = r.json.errors.find((e: any) => e.path === 'git_repository');
    expect(err, JSON.stringify(r.json)).toBeTruthy();
    expect(err.message).toContain('git_repository_name');
    expect((await read(f)).json.git_repository).toBe('app');
    const ok = await t.patch(framePath(f), {
      token: ann.token,
      body: { git_repository_name: 'other' },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ git_repository: 'other', git_repository_name: 'other' });
  });

  const BAD_PORTS: unknown[] = [1023, 65536, 6379, 27017, 9898, 27018, '8080', 8080.5, 0, -1, null];
  it.each(BAD_PORTS.map((p) => [JSON.stringify(p), p]))(
    'port %s is refused with 422 on create and on update',
    async (_label, port) => {
      const create = await t.post(`/v2/projects/${project.id}/spaces/${space}/frames`, {
        token: ann.token,
        body: {
          name: 'p',
          owner_id: ann.id,
          git_repository: 'app',
          git_repository_owner: 'acme',
          git_repository_branch: 'main',
          port,
        },
      });
      expectProblem(create, 422);
      expect(create.json.errors.map((e: any) => e.path)).toContain('port');
      const f = await newFrame(t, ann, project.id, space, { name: 'ports' });
      const update = await t.patch(framePath(f), { token: ann.token, body: { port } });
      expectProblem(update, 422);
      expect(update.json.errors.map((e: any) => e.path)).toContain('port');
      expect((await read(f)).json.port).toBe(8080);
    },
  );

  it.each([1024, 65535])('port %s is accepted on create and on update', async (port) => {
    const f = await newFrame(t, ann, project.id, space, { name: 'edge-port', port });
    expect(f.port).toBe(port);
    const other = port === 1024 ? 65535 : 1024;
    const r = await t.patch(framePath(f), { token: ann.token, body: { port: other } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.port).toBe(other);
  });
});

describe('which settings changes re-roll a frame', () => {
  it('a port change on a running frame re-rolls it; a rename and a branch switch do not', async () => {
    const agent = await selfHosted('roller');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id, name: 'roll' });
    await sync(t, agent.token, { events: replicaEvents(f.id, 1, 'healthy') });
    expect((await read(f)).json.status).toBe('Online');
    expect((await deploymentsOf(f)).map((d) => d.trigger)).toEqual(['create']);

    const port = await t.patch(framePath(f), { token: ann.token, body: { port: 9000 } });
    expect(port.status, port.text).toBe(200);
    let deployments = await deploymentsOf(f);
    expect(deployments.map((d) => d.trigger)).toEqual(['reroll', 'create']);
    expect(at(deployments, 0).status).toBe('in_progress');
    expect(port.json).toMatchObject({
      port: 9000,
      status: 'Starting',
      latest_deployment: { trigger: 'reroll' },
    });
    const told = at((await sync(t, agent.token)).frames, 0);
    expect(told).toMatchObject({
      port: 9000,
      deployment_id: at(deployments, 0).id,
      desired_state: 'running',
    });
    await sync(t, agent.token, {
      events: replicaEvents(f.id, 1, 'healthy', { generation: told.generation }),
    });
    expect((await read(f)).json.status).toBe('Online');

    const rename = await t.patch(framePath(f), {
      token: ann.token,
      body: { name: 'roll-renamed' },
    });
    expect(rename.status).toBe(200);
    expect(rename.json).toMatchObject({
      name: 'roll-renamed',
      status: 'Online',
      pending_changes: [],
    });
    const branch = await t.patch(framePath(f), {
      token: ann.token,
      body: { git_repository_branch: 'develop' },
    });
    expect(branch.status).toBe(200);
    expect(branch.json).toMatchObject({ git_repository_branch: 'develop', status: 'Online' });
    expect(branch.json.pending_changes).toEqual(['git_repository_branch']);
    deployments = await deploymentsOf(f);
    expect(deployments.map((d) => d.trigger)).toEqual(['reroll', 'create']);
    // The agent keeps running what was deployed until a push or the Deploy action.
    expect((await sync(t, agent.token)).frames[0]).toMatchObject({
      git_repository_branch: 'main',
      port: 9000,
    });

    const deploy = await t.post(`${framePath(f)}/deploy`, { token: ann.token });
    expect(deploy.status).toBe(202);
    expect((await read(f)).json.pending_changes).toEqual([]);
    expect((await sync(t, agent.token)).frames[0]).toMatchObject({
      git_repository_branch: 'develop',
      deployment_id: deploy.json.id,
    });
  });

  it('a port change on a stopped frame does not re-roll it; the agent just learns the port', async () => {
    const agent = await selfHosted('stopped-port');
    const f = await newFrame(t, ann, project.id, space, {
      agent_id: agent.id,
      name: 'stopped-port',
    });
    await sync(t, agent.token);
    expect((await t.post(`${framePath(f)}/stop`, { token: ann.token })).status).toBe(202);
    const r = await t.patch(framePath(f), { token: ann.token, body: { port: 9001 } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ port: 9001, desired_state: 'stopped', status: 'Stopped' });
    expect((await deploymentsOf(f)).map((d) => d.trigger)).toEqual(['create']);
    expect((await sync(t, agent.token)).frames[0]).toMatchObject({
      port: 9001,
      desired_state: 'stopped',
    });
  });
});

describe('replica_count and the rollout', () => {
  it('scaling down while the rollout waits only on the removed replica completes it (Online)', async () => {
    const agent = await selfHosted('scaler');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id, replica_count: 2 });
    await sync(t, agent.token, {
      events: [
        { frame_id: f.id, replica: 0, type: 'healthy' },
        { frame_id: f.id, replica: 1, type: 'starting' },
      ],
    });
    expect((await read(f)).json.status).toBe('Starting');
    const r = await t.patch(framePath(f), { token: ann.token, body: { replica_count: 1 } });
    expect(r.status, r.text).toBe(200);
    // The agent removes replica 1, as told; replica 0 has been healthy all along.
    const told = at((await sync(t, agent.token)).frames, 0);
    expect(told.replica_count).toBe(1);
    await sync(t, agent.token, {
      events: [{ frame_id: f.id, replica: 1, type: 'stopped', generation: told.generation }],
    });
    const now = (await read(f)).json;
    expect(now).toMatchObject({ status: 'Online', latest_deployment: { status: 'succeeded' } });
  });

  it('a replica beyond replica_count never stands in for one that has not reported', async () => {
    const agent = await selfHosted('leftover');
    const f = await newFrame(t, ann, project.id, space, { agent_id: agent.id, replica_count: 1 });
    // Only replica 1 (not part of a 1-replica frame) ever reports; replica 0 is silent.
    await sync(t, agent.token, { events: [{ frame_id: f.id, replica: 1, type: 'crashed' }] });
    await sync(t, agent.token, { events: [{ frame_id: f.id, replica: 1, type: 'healthy' }] });
    const now = (await read(f)).json;
    expect(now.status).not.toBe('Online');
    expect(now.status).toBe('Starting');
  });
});
