// The operator's ownership transfers (CONTRACT 7): team, org and project. Each is one audited
// transaction; parallel transfers of one team never leave zero or two owners; a project moved to
// an org keeps its frames running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import { ADMIN, cloudAgent } from '../helpers/frames.ts';
import { addOrgMember, newOrg } from '../helpers/orgs.ts';
import {
  auditOf,
  billingEvents,
  desiredOnAgent,
  expectRestored,
  expectSuspended,
  frameRow,
  json,
  moveProject,
  runningProject,
} from './world.ts';

let t: TestApp;
let agent: { id: string; token: string };
beforeAll(async () => {
  t = await testApp();
  agent = await cloudAgent(t);
});
afterAll(async () => {
  await t.close();
});

const membersOf = (teamId: string) =>
  t.db
    .selectFrom('team_members')
    .select(['user_id', 'role'])
    .where('team_id', '=', teamId)
    .orderBy('user_id')
    .execute();
const ownerIdOf = async (teamId: string) =>
  (
    await t.db
      .selectFrom('teams')
      .select('owner_id')
      .where('id', '=', teamId)
      .executeTakeFirstOrThrow()
  ).owner_id;
const roleOf = async (teamId: string, user: TestUser) =>
  (await membersOf(teamId)).find((m) => m.user_id === user.id)?.role;

describe('POST /v2/admin/teams/<team_id>/owner', () => {
  it('makes a member the owner, the old owner admin, and records it', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const team = await newTeam(t, ann);
    await addMember(t, team.id, bob, 'viewer');
    const r = await t.post(`/v2/admin/teams/${team.id}/owner`, {
      token: ADMIN,
      body: { user_id: bob.id },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ team_id: team.id, owner_id: bob.id, previous_owner_id: ann.id });
    expect(await ownerIdOf(team.id)).toBe(bob.id);
    expect(await roleOf(team.id, bob)).toBe('owner');
    expect(await roleOf(team.id, ann)).toBe('admin');

    const [audit] = await auditOf(t, team.id);
    expect(audit).toMatchObject({
      team_id: team.id,
      actor_id: null,
      action: 'team.owner_transferred',
      target_type: 'team',
    });
    expect(audit?.request_id).toBeTruthy();
    expect(json(audit?.before)).toEqual({ owner_id: ann.id });
    expect(json(audit?.after)).toEqual({ owner_id: bob.id, previous_owner_role: 'admin' });
    // The team's own log shows it to its (new) owner.
    const log = await t.get(`/v2/teams/${team.id}/audit`, { token: bob.token });
    expect(log.json.data[0]).toMatchObject({ action: 'team.owner_transferred', actor_id: null });

    // The new owner is as fixed as the first: self-service cannot demote them.
    const demote = await t.patch(`/v2/teams/${team.id}/members/${bob.id}`, {
      token: ann.token,
      body: { role: 'member' },
    });
    expect(demote.status).toBeGreaterThanOrEqual(400);
    expect(await roleOf(team.id, bob)).toBe('owner');
  });

  it('refuses a non-member (422), an unknown team or an org (404), and callers without ADMIN_TOKEN', async () => {
    const ann = await newUser(t, 'ann');
    const stranger = await newUser(t, 'stranger');
    const team = await newTeam(t, ann);
    const org = await newOrg(t, ann);
    const to = (id: string, body: unknown, token = ADMIN) =>
      t.post(`/v2/admin/teams/${id}/owner`, { token, body });
    const refused = await to(team.id, { user_id: stranger.id });
    expectProblem(refused, 422, 'not_a_member');
    expect(refused.json.errors).toEqual([expect.objectContaining({ path: 'user_id' })]);
    expectProblem(await to(team.id, { user_id: 'usr_nobody' }), 422, 'not_a_member');
    expectProblem(await to('team_01NOSUCHTEAM', { user_id: ann.id }), 404, 'team_not_found');
    expectProblem(await to(org.id, { user_id: ann.id }), 404);
    expectProblem(await to(team.id, {}), 422);
    expectProblem(await to(team.id, { user_id: ann.id, role: 'owner' }), 422);
    expectProblem(await to(team.id, { user_id: stranger.id }, ann.token), 401);
    expectProblem(
      await t.post(`/v2/admin/teams/${team.id}/owner`, { body: { user_id: ann.id } }),
      401,
    );
    expect(await ownerIdOf(team.id)).toBe(ann.id);
    expect(await auditOf(t, team.id)).toEqual([]);
  });

  it('answers 200 and records nothing when the user already owns the team', async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const r = await t.post(`/v2/admin/teams/${team.id}/owner`, {
      token: ADMIN,
      body: { user_id: ann.id },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ team_id: team.id, owner_id: ann.id, previous_owner_id: ann.id });
    expect(await roleOf(team.id, ann)).toBe('owner');
    expect(await auditOf(t, team.id)).toEqual([]);
  });

  it('20 parallel transfers to different members leave exactly one owner, teams.owner_id, at the end', async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const members: TestUser[] = [];
    for (let i = 0; i < 20; i++) {
      const u = await newUser(t, `m${i}`);
      await addMember(t, team.id, u, i % 2 ? 'member' : 'viewer');
      members.push(u);
    }
    const answers = await Promise.all(
      members.map((u) =>
        t.post(`/v2/admin/teams/${team.id}/owner`, { token: ADMIN, body: { user_id: u.id } }),
      ),
    );
    for (const a of answers) expect(a.status, a.text).toBe(200);

    const rows = await membersOf(team.id);
    const owners = rows.filter((m) => m.role === 'owner');
    expect(owners).toHaveLength(1);
    expect(owners[0]?.user_id).toBe(await ownerIdOf(team.id));
    expect(rows).toHaveLength(21);
    // Every owner before the last one is now an admin; the rest kept their roles.
    expect(rows.find((m) => m.user_id === ann.id)?.role).toBe('admin');
    // The transfers ran one after the other: each started from the owner the one before left.
    const chain = (await auditOf(t, team.id)).map((a) => [
      json(a.before).owner_id,
      json(a.after).owner_id,
    ]);
    expect(chain).toHaveLength(20);
    expect(chain[0]?.[0]).toBe(ann.id);
    for (let i = 1; i < chain.length; i++) expect(chain[i]?.[0]).toBe(chain[i - 1]?.[1]);
    expect(chain[19]?.[1]).toBe(owners[0]?.user_id);
  });
});

describe('transfers racing self-service membership changes', () => {
  it('never leave zero or two owners, and nothing fails with a 5xx', async () => {
    const ann = await newUser(t, 'ann');
    const carl = await newUser(t, 'carl');
    const team = await newTeam(t, ann);
    await addMember(t, team.id, carl, 'admin');
    const members: TestUser[] = [];
    for (let i = 0; i < 8; i++) {
      const u = await newUser(t, `r${i}`);
      await addMember(t, team.id, u, 'member');
      members.push(u);
    }
    // Carl (an admin) changes and removes the very members the operator makes owner.
    const answers = await Promise.all(
      members.flatMap((u, i) => [
        t.post(`/v2/admin/teams/${team.id}/owner`, { token: ADMIN, body: { user_id: u.id } }),
        i % 2
          ? t.del(`/v2/teams/${team.id}/members/${u.id}`, { token: carl.token })
          : t.patch(`/v2/teams/${team.id}/members/${u.id}`, {
              token: carl.token,
              body: { role: 'viewer' },
            }),
      ]),
    );
    for (const a of answers) expect(a.status, a.text).toBeLessThan(500);
    const rows = await membersOf(team.id);
    const owners = rows.filter((m) => m.role === 'owner');
    expect(owners.map((o) => o.user_id)).toEqual([await ownerIdOf(team.id)]);
    const count = await t.db
      .selectFrom('teams')
      .select('member_count')
      .where('id', '=', team.id)
      .executeTakeFirstOrThrow();
    expect(count.member_count).toBe(rows.length);
  });
});

describe('POST /v2/admin/orgs/<org_id>/owner', () => {
  it('makes an org member the owner and the old owner admin, audited in the org', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const org = await newOrg(t, ann);
    await addOrgMember(t, org.id, bob, 'member');
    const r = await t.post(`/v2/admin/orgs/${org.id}/owner`, {
      token: ADMIN,
      body: { user_id: bob.id },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ org_id: org.id, owner_id: bob.id, previous_owner_id: ann.id });
    expect(await ownerIdOf(org.id)).toBe(bob.id);
    expect(await roleOf(org.id, bob)).toBe('owner');
    expect(await roleOf(org.id, ann)).toBe('admin');
    const [audit] = await auditOf(t, org.id);
    expect(audit).toMatchObject({
      team_id: org.id,
      action: 'org.owner_transferred',
      actor_id: null,
    });
  });

  it('refuses a non-member (422), an unknown org or a team (404)', async () => {
    const ann = await newUser(t, 'ann');
    const stranger = await newUser(t, 'stranger');
    const org = await newOrg(t, ann);
    const team = await newTeam(t, ann);
    const to = (id: string, body: unknown) =>
      t.post(`/v2/admin/orgs/${id}/owner`, { token: ADMIN, body });
    expectProblem(await to(org.id, { user_id: stranger.id }), 422, 'not_a_member');
    expectProblem(await to('org_01NOSUCHORG', { user_id: ann.id }), 404, 'org_not_found');
    expectProblem(await to(team.id, { user_id: ann.id }), 404);
    expect(await ownerIdOf(org.id)).toBe(ann.id);
  });

  it('parallel transfers of one org never leave zero or two owners', async () => {
    const ann = await newUser(t, 'ann');
    const org = await newOrg(t, ann);
    const members: TestUser[] = [];
    for (let i = 0; i < 8; i++) {
      const u = await newUser(t, `o${i}`);
      await addOrgMember(t, org.id, u, i % 2 ? 'member' : 'admin');
      members.push(u);
    }
    const answers = await Promise.all(
      [...members, ann].map((u) =>
        t.post(`/v2/admin/orgs/${org.id}/owner`, { token: ADMIN, body: { user_id: u.id } }),
      ),
    );
    for (const a of answers) expect(a.status, a.text).toBe(200);
    const owners = (await membersOf(org.id)).filter((m) => m.role === 'owner');
    expect(owners.map((o) => o.user_id)).toEqual([await ownerIdOf(org.id)]);
  });
});

describe('POST /v2/admin/projects/<project_id>/owner', () => {
  it('gives a project to another user: grants stay, access follows the new owner at once', async () => {
    const ann = await newUser(t, 'ann');
    const carol = await newUser(t, 'carol');
    const viewer = await newUser(t, 'viewer');
    const { project } = await runningProject(t, ann, agent, 1);
    const team = await newTeam(t, carol);
    await addMember(t, team.id, viewer, 'member');
    const grant = await share(t, team.id, project.id, 'viewer');
    // Both read it once, so their roles are in the memo before the transfer.
    expect((await t.get(`/v2/projects/${project.id}`, { token: ann.token })).status).toBe(200);
    expect((await t.get(`/v2/projects/${project.id}`, { token: viewer.token })).status).toBe(200);

    const r = await moveProject(t, project.id, { user_id: carol.id });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      project_id: project.id,
      owner_kind: 'user',
      owner_id: carol.id,
      previous: { owner_kind: 'user', owner_id: ann.id },
      frames_affected: 0,
    });
    expect((await t.get(`/v2/projects/${project.id}`, { token: ann.token })).status).toBe(404);
    expect((await t.get(`/v2/projects/${project.id}`, { token: carol.token })).json).toMatchObject({
      owner_id: carol.id,
      role: 'owner',
    });
    expect((await t.get(`/v2/projects/${project.id}`, { token: viewer.token })).status).toBe(200);
    const grants = await t.db
      .selectFrom('grants')
      .select('id')
      .where('project_id', '=', project.id)
      .execute();
    expect(grants.map((g) => g.id)).toEqual([grant]);

    const [audit] = await auditOf(t, project.id);
    expect(audit).toMatchObject({
      project_id: project.id,
      team_id: null,
      actor_id: null,
      action: 'project.owner_transferred',
      target_type: 'project',
    });
    expect(json(audit?.before)).toEqual({ owner_kind: 'user', owner_id: ann.id });
    expect(json(audit?.after)).toEqual({
      owner_kind: 'user',
      owner_id: carol.id,
      frames_affected: 0,
    });
  });

  it('moves a project to an org while its frames run: they keep running, untouched', async () => {
    const ann = await newUser(t, 'ann');
    const org = await newOrg(t, ann);
    const { project, frames } = await runningProject(t, ann, agent, 2);
    const before = await Promise.all(frames.map((f) => frameRow(t, f.id)));

    const r = await moveProject(t, project.id, { org_id: org.id });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ owner_kind: 'org', owner_id: org.id, frames_affected: 0 });
    const row = await t.db
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ owner_id: null, org_id: org.id });

    for (const [i, f] of frames.entries()) {
      const after = await frameRow(t, f.id);
      // Not stopped, not restarted: same desired state, same generation (the agent has nothing to redo).
      expect(after).toMatchObject({
        desired_state: 'running',
        generation: before[i]?.generation,
        last_status: 'Online',
      });
    }
    const desired = await desiredOnAgent(t, agent);
    for (const f of frames) expect(desired[f.id]).toBe('running');
    const events = await t.db
      .selectFrom('frame_events')
      .select('type')
      .where(
        'frame_id',
        'in',
        frames.map((f) => f.id),
      )
      .where('type', 'in', ['suspended', 'restored', 'stop', 'start'])
      .execute();
    expect(events).toEqual([]);
    const [audit] = await auditOf(t, project.id);
    expect(audit).toMatchObject({ team_id: org.id, project_id: project.id });
  });

  it('moved to a past-due org, the frames are suspended as billing would; moved back, restored', async () => {
    const ann = await newUser(t, 'ann');
    const org = await newOrg(t, ann);
    await t.db
      .updateTable('teams')
      .set({ billing_status: 'past_due' })
      .where('id', '=', org.id)
      .execute();
    const { project, frames } = await runningProject(t, ann, agent, 2);

    const r = await moveProject(t, project.id, { org_id: org.id });
    expect(r.status, r.text).toBe(200);
    expect(r.json.frames_affected).toBe(2);
    await expectSuspended(t, agent, frames);

    const back = await moveProject(t, project.id, { user_id: ann.id });
    expect(back.json.frames_affected).toBe(2);
    await expectRestored(t, agent, frames);
    expect(await billingEvents(t, frames[0]?.id ?? '')).toEqual(['suspended', 'restored']);
  });

  it('refuses anything but exactly one known new owner', async () => {
    const ann = await newUser(t, 'ann');
    const org = await newOrg(t, ann);
    const team = await newTeam(t, ann);
    const { project } = await runningProject(t, ann, agent, 0);
    expectProblem(await moveProject(t, project.id, {}), 422, 'one_owner_required');
    expectProblem(
      await moveProject(t, project.id, { user_id: ann.id, org_id: org.id }),
      422,
      'one_owner_required',
    );
    expectProblem(await moveProject(t, project.id, { user_id: 'usr_nobody' }), 422, 'unknown_user');
    expectProblem(await moveProject(t, project.id, { org_id: team.id }), 422, 'unknown_org');
    expectProblem(await moveProject(t, project.id, { team_id: team.id }), 422);
    expectProblem(
      await moveProject(t, 'prj_01NOSUCHPROJECT', { user_id: ann.id }),
      404,
      'project_not_found',
    );
    expectProblem(
      await t.post(`/v2/admin/projects/${project.id}/owner`, {
        token: ann.token,
        body: { org_id: org.id },
      }),
      401,
    );
    // Already the owner: 200, nothing recorded.
    const same = await moveProject(t, project.id, { user_id: ann.id });
    expect(same.status, same.text).toBe(200);
    expect(same.json.frames_affected).toBe(0);
    expect(await auditOf(t, project.id)).toEqual([]);
  });

  it('parallel transfers of one project leave it with exactly one owner and an audit chain', async () => {
    const ann = await newUser(t, 'ann');
    const { project } = await runningProject(t, ann, agent, 1);
    const targets: Array<Record<string, string>> = [];
    for (let i = 0; i < 6; i++) {
      const u = await newUser(t, `p${i}`);
      targets.push(i % 2 ? { user_id: u.id } : { org_id: (await newOrg(t, u)).id });
    }
    const answers = await Promise.all(targets.map((b) => moveProject(t, project.id, b)));
    for (const a of answers) expect(a.status, a.text).toBe(200);
    const row = await t.db
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow();
    const chain = (await auditOf(t, project.id)).map((a) => [json(a.before), json(a.after)]);
    expect(chain).toHaveLength(6);
    for (let i = 1; i < chain.length; i++)
      expect(chain[i]?.[0]?.owner_id).toBe(chain[i - 1]?.[1]?.owner_id);
    expect(chain[5]?.[1]?.owner_id).toBe(row.org_id ?? row.owner_id);
  });
});

describe('the operator routes of this issue', () => {
  it('refuse a user token, an agent token and no token (401), and change nothing', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const team = await newTeam(t, ann);
    await addMember(t, team.id, bob, 'admin');
    const org = await newOrg(t, ann);
    await addOrgMember(t, org.id, bob, 'admin');
    const { project } = await runningProject(t, ann, agent, 0);
    const calls: Array<[string, string, unknown]> = [
      ['POST', `/v2/admin/teams/${team.id}/owner`, { user_id: bob.id }],
      ['POST', `/v2/admin/orgs/${org.id}/owner`, { user_id: bob.id }],
      ['POST', `/v2/admin/projects/${project.id}/owner`, { org_id: org.id }],
      ['PUT', `/v2/admin/orgs/${org.id}/billing`, { status: 'past_due' }],
    ];
    for (const [method, path, body] of calls)
      for (const token of [ann.token, bob.token, agent.token, undefined])
        expectProblem(await t.request(method, path, { token, body }), 401);
    expect(await ownerIdOf(team.id)).toBe(ann.id);
    expect(await ownerIdOf(org.id)).toBe(ann.id);
    const row = await t.db
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', project.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ owner_id: ann.id, org_id: null });
    const billing = await t.db
      .selectFrom('teams')
      .select('billing_status')
      .where('id', '=', org.id)
      .executeTakeFirstOrThrow();
    expect(billing.billing_status).toBe('active');
  });
});
