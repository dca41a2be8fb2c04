// Frames over HTTP in the authorization matrix (CONTRACT 1 and 3): what each effective project
// role may do to a frame, through the routes, not only the pure rule (test/access/roles.test.ts).
// Start, stop, deploy and PATCH need member; create and delete need admin. Too low a role on a
// visible project is 403 `insufficient_role`; a project out of reach is 404; no token is 401.
// A refused call changes nothing: no state, no deployment, no event, no audit record.
//
// Team roles reach the project through a grant, capped by the grant's role: the same person is
// admin through an admin grant, member through a member grant, viewer through a viewer grant.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type Reply, type TestApp } from '../helpers/app.ts';
import { checkAnswers } from '../helpers/openapi-conformance.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import { ADMIN, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';

type Person = 'owner' | 'admin' | 'member' | 'viewer' | 'outsider';
type Caller = Person | 'anonymous';
type Op = 'stop' | 'start' | 'deploy' | 'patch' | 'create' | 'delete';
type Frame = { id: string; project_id: string; space_id: string; name: string };

let t: TestApp;
let users: Record<Person, TestUser>;
let team: { id: string };
/** Owned by `owner`, shared with the team at grant role admin: team role = project role. */
let project: { id: string };
let space: string;

const unique = () => randomBytes(4).toString('hex');
const RANK = { viewer: 0, member: 1, admin: 2, owner: 3 } as const;
const MIN_ROLE: Record<Op, keyof typeof RANK> = {
  stop: 'member',
  start: 'member',
  deploy: 'member',
  patch: 'member',
  create: 'admin',
  delete: 'admin',
};
const OK_STATUS: Record<Op, number> = {
  stop: 202,
  start: 202,
  deploy: 202,
  patch: 200,
  create: 201,
  delete: 200,
};

let answers: Awaited<ReturnType<typeof checkAnswers>>;
beforeAll(async () => {
  t = await testApp();
  answers = await checkAnswers(t);
  const [owner, admin, member, viewer, outsider] = await Promise.all(
    ['owner', 'admin', 'member', 'viewer', 'outsider'].map((n) => newUser(t, n)),
  );
  users = { owner: owner!, admin: admin!, member: member!, viewer: viewer!, outsider: outsider! };
  team = await newTeam(t, users.owner, 'Frames');
  await addMember(t, team.id, users.admin, 'admin');
  await addMember(t, team.id, users.member, 'member');
  await addMember(t, team.id, users.viewer, 'viewer');
  await newTeam(t, users.outsider, 'Elsewhere');
  project = await newProject(t, users.owner, 'Frames project');
  await share(t, team.id, project.id, 'admin');
  space = await defaultSpace(t, users.owner, project.id);
});
afterAll(async () => {
  await t?.close();
});

/** A fresh frame of the owner's, running, or stopped by the owner when `stopped`. */
async function freshFrame(projectId = project.id, spaceId = space, stopped = false) {
  const f: Frame = await newFrame(t, users.owner, projectId, spaceId, { name: `f-${unique()}` });
  if (stopped) {
    const r = await t.post(`${framePath(f)}/stop`, { token: users.owner.token });
    expect(r.status, r.text).toBe(202);
  }
  return f;
}

/** Everything a refused call must leave alone. */
async function footprint(frameId: string) {
  const frame = await t.db
    .selectFrom('frames')
    .select(['name', 'desired_state', 'generation', 'version'])
    .where('id', '=', frameId)
    .executeTakeFirst();
  const count = async (table: 'deployments' | 'frame_events') =>
    Number(
      (
        await t.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('frame_id', '=', frameId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const audit = await t.db
    .selectFrom('audit_events')
    .select('action')
    .where('target_id', '=', frameId)
    .execute();
  return {
    frame,
    deployments: await count('deployments'),
    events: await count('frame_events'),
    audit: audit.length,
  };
}

/** Calls `op` on a fresh target as `token`; answers the reply and the frame it acted on. */
async function perform(op: Op, token: string | undefined, projectId = project.id) {
  const spaceId = projectId === project.id ? space : await defaultSpace(t, users.owner, projectId);
  if (op === 'create') {
    const r = await t.post(`/v2/projects/${projectId}/spaces/${spaceId}/frames`, {
      token,
      body: {
        name: `new-${unique()}`,
        owner_id: users.owner.id,
        git_repository: 'app',
        git_repository_owner: 'acme',
        git_repository_branch: 'main',
        port: 8080,
      },
    });
    return { r, frame: undefined };
  }
  const frame = await freshFrame(projectId, spaceId, op === 'start');
  const path = framePath(frame);
  const before = await footprint(frame.id);
  let r: Reply;
  if (op === 'patch') r = await t.patch(path, { token, body: { name: `renamed-${unique()}` } });
  else if (op === 'delete') r = await t.del(path, { token });
  else r = await t.post(`${path}/${op}`, { token });
  return { r, frame, before };
}

/** The refusal left the frame, its deployments, events and audit exactly as they were. */
async function expectUntouched(frame: Frame | undefined, before: unknown) {
  if (!frame) return;
  expect(await footprint(frame.id)).toEqual(before);
}

async function frameCount(projectId: string) {
  const rows = await t.db
    .selectFrom('frames')
    .select('id')
    .where('project_id', '=', projectId)
    .execute();
  return rows.length;
}

/** What an allowed call did, as the frame now reads. */
async function expectApplied(op: Op, r: Reply, frame: Frame | undefined) {
  expect(r.status, r.text).toBe(OK_STATUS[op]);
  if (op === 'create') {
    expect(r.json).toMatchObject({ project_id: project.id, owner_id: users.owner.id });
    return;
  }
  const read = await t.get(framePath(frame!), { token: users.owner.token });
  switch (op) {
    case 'stop':
      expect(read.json.desired_state).toBe('stopped');
      break;
    case 'start':
      expect(read.json.desired_state).toBe('running');
      break;
    case 'deploy':
      expect(r.json).toMatchObject({ frame_id: frame!.id, trigger: 'manual' });
      expect(read.json.latest_deployment).toMatchObject({ id: r.json.id, trigger: 'manual' });
      break;
    case 'patch':
      expect(read.json.name).toBe(r.json.name);
      expect(read.json.name).not.toBe(frame!.name);
      break;
    case 'delete':
      expect(r.json).toMatchObject({ id: frame!.id, deleted: true });
      expectProblem(read, 404, 'frame_not_found');
      break;
  }
}

const OPS: Op[] = ['stop', 'start', 'deploy', 'patch', 'create', 'delete'];
const CALLERS: Caller[] = ['owner', 'admin', 'member', 'viewer', 'outsider', 'anonymous'];

function expected(op: Op, caller: Caller): number {
  if (caller === 'anonymous') return 401;
  if (caller === 'outsider') return 404;
  return RANK[caller] >= RANK[MIN_ROLE[op]] ? OK_STATUS[op] : 403;
}

describe('frame operations by effective role (grant admin: team role = project role)', () => {
  for (const op of OPS) {
    for (const caller of CALLERS) {
      const status = expected(op, caller);
      it(`${op}: ${caller} → ${status}`, async () => {
        const token = caller === 'anonymous' ? undefined : users[caller].token;
        const framesBefore = await frameCount(project.id);
        const { r, frame, before } = await perform(op, token);
        if (status < 400) {
          await expectApplied(op, r, frame);
          return;
        }
        if (status === 401) {
          expectProblem(r, 401);
          expect(String(r.headers['www-authenticate'])).toMatch(/^Bearer\b/);
        } else if (status === 403) {
          expectProblem(r, 403, 'insufficient_role');
          expect(r.json.detail).toContain(MIN_ROLE[op]);
        } else expectProblem(r, 404, 'project_not_found');
        await expectUntouched(frame, before);
        // A refused create made no frame (the fresh target of the others is the only new one).
        expect(await frameCount(project.id)).toBe(framesBefore + (frame ? 1 : 0));
      });
    }
  }
});

describe('a grant caps the team role', () => {
  let viewerGrant: { id: string };
  let memberGrant: { id: string };
  beforeAll(async () => {
    viewerGrant = await newProject(t, users.owner, 'Shared as viewer');
    await share(t, team.id, viewerGrant.id, 'viewer');
    memberGrant = await newProject(t, users.owner, 'Shared as member');
    await share(t, team.id, memberGrant.id, 'member');
  });

  it('the team admin reads the projects at the grant roles', async () => {
    const role = async (id: string) =>
      (await t.get(`/v2/projects/${id}`, { token: users.admin.token })).json.role;
    expect(await role(viewerGrant.id)).toBe('viewer');
    expect(await role(memberGrant.id)).toBe('member');
  });

  for (const op of OPS) {
    it(`${op}: a team admin through a viewer grant is refused 403`, async () => {
      const { r, frame, before } = await perform(op, users.admin.token, viewerGrant.id);
      expectProblem(r, 403, 'insufficient_role');
      await expectUntouched(frame, before);
    });

    const memberMay = RANK.member >= RANK[MIN_ROLE[op]];
    it(`${op}: a team admin through a member grant is ${memberMay ? 'allowed' : 'refused 403'}`, async () => {
      const { r, frame, before } = await perform(op, users.admin.token, memberGrant.id);
      if (memberMay) expect(r.status, r.text).toBe(OK_STATUS[op]);
      else {
        expectProblem(r, 403, 'insufficient_role');
        await expectUntouched(frame, before);
      }
    });
  }

  it('a team viewer stays viewer through a member grant (the lower of the two)', async () => {
    const { r, frame, before } = await perform('stop', users.viewer.token, memberGrant.id);
    expectProblem(r, 403, 'insufficient_role');
    await expectUntouched(frame, before);
  });

  it('two teams: the higher of the capped roles counts', async () => {
    const p = await newProject(t, users.owner, 'Two paths');
    await share(t, team.id, p.id, 'viewer');
    const second = await newTeam(t, users.owner, 'Second');
    await addMember(t, second.id, users.viewer, 'member');
    await share(t, second.id, p.id, 'member');
    // Through the first team: viewer; through the second: member. Member wins.
    const { r } = await perform('stop', users.viewer.token, p.id);
    expect(r.status, r.text).toBe(202);
    expectProblem((await perform('create', users.viewer.token, p.id)).r, 403, 'insufficient_role');
  });
});

describe('the role is decided before anything about the frame is told', () => {
  it('a viewer asking for a frame that does not exist is 403; a member is told it is not there', async () => {
    const path = `/v2/projects/${project.id}/spaces/${space}/frames/frm_00000000000000000000000000`;
    for (const op of ['stop', 'start', 'deploy'])
      expectProblem(
        await t.post(`${path}/${op}`, { token: users.viewer.token }),
        403,
        'insufficient_role',
      );
    expectProblem(await t.post(`${path}/stop`, { token: users.member.token }), 404);
    expectProblem(await t.post(`${path}/stop`, { token: users.outsider.token }), 404);
  });

  it("a viewer is refused 403 before the self-hosted agent's absence (503) is checked", async () => {
    const agent = await t.post(`/v2/projects/${project.id}/agents`, {
      token: users.owner.token,
      body: { name: `edge-${unique()}` },
    });
    expect(agent.status, agent.text).toBe(201);
    const f = await newFrame(t, users.owner, project.id, space, {
      name: `hosted-${unique()}`,
      agent_id: agent.json.id,
    });
    const before = await footprint(f.id);
    expectProblem(
      await t.post(`${framePath(f)}/stop`, { token: users.viewer.token }),
      403,
      'insufficient_role',
    );
    expect(await footprint(f.id)).toEqual(before);
    // The same call from a member reaches the agent check: the agent never synced.
    const r = await t.post(`${framePath(f)}/stop`, { token: users.member.token });
    expectProblem(r, 503, 'agent_offline');
    expect(r.headers['retry-after']).toBeTruthy();
  });

  it("a viewer is refused 403 before the owner's billing (402) is checked", async () => {
    const payer = await newUser(t, 'payer');
    const p = await newProject(t, payer, 'Unpaid');
    await share(t, team.id, p.id, 'admin');
    const s = await defaultSpace(t, payer, p.id);
    const f = await newFrame(t, payer, p.id, s, { name: `unpaid-${unique()}` });
    const stop = await t.post(`${framePath(f)}/stop`, { token: payer.token });
    expect(stop.status, stop.text).toBe(202);
    const billing = await t.put(`/v2/admin/users/${payer.id}/billing`, {
      token: ADMIN,
      body: { status: 'past_due' },
    });
    expect(billing.status, billing.text).toBe(200);
    for (const op of ['start', 'deploy'])
      expectProblem(
        await t.post(`${framePath(f)}/${op}`, { token: users.viewer.token }),
        403,
        'insufficient_role',
      );
    for (const op of ['start', 'deploy'])
      expectProblem(
        await t.post(`${framePath(f)}/${op}`, { token: users.member.token }),
        402,
        'billing_past_due',
      );
  });
});

describe('the OpenAPI document', () => {
  it('declares every answer above: status, content type and body (runs last)', () => {
    expect(answers.violations).toEqual([]);
    expect(answers.checked).toBeGreaterThan(0);
  });
});
