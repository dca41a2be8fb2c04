// Projects owned by an organization (CONTRACT 3a): created with org_id by the org's owners and
// admins, read with owner_kind 'org', reached by the org path (org owner → owner, admin →
// admin, member → base_role) beside team grants, explained in GET /access, shared by the org's
// owners and admins only, and their frames read and billed as the org's. A lower base_role is
// obeyed on the next request, on this instance and on a second one on the same database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, testAppOn, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import { addOrgMember, newOrg, newOrgProject, type TestOrg } from '../helpers/orgs.ts';
import { cloudAgent, defaultSpace, framePath, newFrame, sync } from '../helpers/frames.ts';
import type { BaseRole } from '../../src/db/schema.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t?.close();
});

/** An org owned by `owner` with an admin and a member. */
async function orgWorld(baseRole: BaseRole = 'viewer') {
  const owner = await newUser(t, 'owner');
  const admin = await newUser(t, 'admin');
  const member = await newUser(t, 'member');
  const outsider = await newUser(t, 'outsider');
  const org = await newOrg(t, owner, { baseRole });
  await addOrgMember(t, org.id, admin, 'admin');
  await addOrgMember(t, org.id, member, 'member');
  return { owner, admin, member, outsider, org };
}

const setBaseRole = (org: TestOrg, baseRole: BaseRole) =>
  t.db.updateTable('teams').set({ base_role: baseRole }).where('id', '=', org.id).execute();

async function roleOf(app: TestApp, user: TestUser, projectId: string) {
  const r = await app.get(`/v2/projects/${projectId}`, { token: user.token });
  if (r.status === 404) return null;
  expect(r.status, r.text).toBe(200);
  return r.json.role as string;
}

describe('POST /v2/projects with org_id', () => {
  it('the org owner and admins create (owner_id is the org, owner_kind org); a member 403, an outsider 404', async () => {
    const { owner, admin, member, outsider, org } = await orgWorld();
    const byOwner = await t.post('/v2/projects', {
      token: owner.token,
      body: { name: 'Shop', org_id: org.id },
    });
    expect(byOwner.status, byOwner.text).toBe(201);
    expect(byOwner.json).toEqual({
      id: expect.stringMatching(/^prj_/),
      name: 'Shop',
      owner_id: org.id,
      owner_kind: 'org',
      role: 'owner',
      created_at: expect.any(String),
    });
    const byAdmin = await t.post('/v2/projects', {
      token: admin.token,
      body: { name: 'Blog', org_id: org.id },
    });
    expect(byAdmin.status, byAdmin.text).toBe(201);
    expect(byAdmin.json).toMatchObject({ owner_id: org.id, owner_kind: 'org', role: 'admin' });
    // The project is the org's, not its creator's: the org owner is its owner.
    expect(await roleOf(t, owner, byAdmin.json.id)).toBe('owner');

    expectProblem(
      await t.post('/v2/projects', { token: member.token, body: { name: 'X', org_id: org.id } }),
      403,
      'insufficient_role',
    );
    expectProblem(
      await t.post('/v2/projects', { token: outsider.token, body: { name: 'X', org_id: org.id } }),
      404,
      'org_not_found',
    );
    expectProblem(
      await t.post('/v2/projects', {
        token: owner.token,
        body: { name: 'X', org_id: 'org_01NOSUCHORG000000000000000' },
      }),
      404,
      'org_not_found',
    );
    // A team is not an org, though its owner is the caller.
    const team = await newTeam(t, owner);
    expectProblem(
      await t.post('/v2/projects', { token: owner.token, body: { name: 'X', org_id: team.id } }),
      404,
      'org_not_found',
    );

    const spaces = await t.get(`/v2/projects/${byOwner.json.id}/spaces`, { token: owner.token });
    expect(spaces.json.data.map((s: { name: string }) => s.name)).toEqual(['default']);
    const audit = await t.get(`/v2/projects/${byOwner.json.id}/audit`, { token: owner.token });
    expect(audit.json.data[0]).toMatchObject({
      action: 'project.created',
      actor_id: owner.id,
      after: { name: 'Shop', org_id: org.id },
    });
    const rows = await t.db
      .selectFrom('projects')
      .select(['owner_id', 'org_id'])
      .where('id', '=', byOwner.json.id)
      .executeTakeFirstOrThrow();
    expect(rows).toEqual({ owner_id: null, org_id: org.id });
  });

  it("a user's project still answers owner_kind user", async () => {
    const ann = await newUser(t, 'ann');
    const p = await newProject(t, ann);
    const r = await t.get(`/v2/projects/${p.id}`, { token: ann.token });
    expect(r.json).toMatchObject({ owner_id: ann.id, owner_kind: 'user', role: 'owner' });
  });
});

describe('the org path to a project', () => {
  it('reads and lists: owner, admin, member by base_role, outsider 404', async () => {
    const { owner, admin, member, outsider, org } = await orgWorld('viewer');
    const p = await newOrgProject(t, owner, org.id);
    expect(await roleOf(t, owner, p.id)).toBe('owner');
    expect(await roleOf(t, admin, p.id)).toBe('admin');
    expect(await roleOf(t, member, p.id)).toBe('viewer');
    expectProblem(
      await t.get(`/v2/projects/${p.id}`, { token: outsider.token }),
      404,
      'project_not_found',
    );
    for (const [u, role] of [
      [owner, 'owner'],
      [admin, 'admin'],
      [member, 'viewer'],
    ] as const) {
      const list = await t.get('/v2/projects', { token: u.token });
      expect(list.json.data).toEqual([
        expect.objectContaining({ id: p.id, owner_id: org.id, owner_kind: 'org', role }),
      ]);
    }
    expect((await t.get('/v2/projects', { token: outsider.token })).json.data).toEqual([]);
  });

  it.each<[BaseRole, string | null]>([
    ['none', null],
    ['viewer', 'viewer'],
    ['member', 'member'],
    ['admin', 'admin'],
  ])('base_role %s gives a plain member %s (owner and admin unchanged)', async (base, want) => {
    const { owner, admin, member, org } = await orgWorld(base);
    const p = await newOrgProject(t, owner, org.id);
    expect(await roleOf(t, member, p.id)).toBe(want);
    const listed = (await t.get('/v2/projects', { token: member.token })).json.data;
    expect(listed.map((x: { role: string }) => x.role)).toEqual(want ? [want] : []);
    expect(await roleOf(t, owner, p.id)).toBe('owner');
    expect(await roleOf(t, admin, p.id)).toBe('admin');
    // What a member may do follows: a viewer reads, a member operates, an admin renames.
    const rename = await t.patch(`/v2/projects/${p.id}`, {
      token: member.token,
      body: { name: 'Renamed' },
    });
    expect(rename.status).toBe(want === null ? 404 : want === 'admin' ? 200 : 403);
  });

  it('the best of the org path and a team grant counts (max of min)', async () => {
    const { owner, member, outsider, org } = await orgWorld('none');
    const p = await newOrgProject(t, owner, org.id);
    const team = await newTeam(t, owner);
    await addMember(t, team.id, member, 'admin');
    await addMember(t, team.id, outsider, 'member');
    await share(t, team.id, p.id, 'member');
    expect(await roleOf(t, member, p.id)).toBe('member'); // base_role none, the team gives member
    expect(await roleOf(t, outsider, p.id)).toBe('member'); // not in the org: the team path alone
    await setBaseRole(org, 'admin');
    expect(await roleOf(t, member, p.id)).toBe('admin'); // the org path is now higher
    expect(await roleOf(t, outsider, p.id)).toBe('member');
  });

  it('delete is for the org owner; sharing for the org owner and admins by their org role', async () => {
    const { owner, admin, member, outsider, org } = await orgWorld('admin');
    const p = await newOrgProject(t, owner, org.id);
    // A team of the org admin's, with the others as team admins: each may manage its grants.
    const team = await newTeam(t, admin);
    await addMember(t, team.id, member, 'admin');
    await addMember(t, team.id, outsider, 'admin');
    const grantBy = (u: TestUser) =>
      t.post(`/v2/teams/${team.id}/grants`, {
        token: u.token,
        body: { project_id: p.id, role: 'viewer' },
      });
    // member is admin on the project by base_role admin, yet not an org admin: 403.
    expectProblem(await grantBy(member), 403, 'insufficient_role');
    // outsider does not reach the project: 404.
    expectProblem(await grantBy(outsider), 404, 'project_not_found');
    const g = await grantBy(admin);
    expect(g.status, g.text).toBe(201);
    // outsider now reaches it as team admin capped by the grant: still no sharing (403).
    const change = (u: TestUser) =>
      t.patch(`/v2/teams/${team.id}/grants/${g.json.id}`, {
        token: u.token,
        body: { role: 'admin' },
      });
    expectProblem(await change(outsider), 403);
    expect((await change(admin)).status).toBe(200);
    // outsider is now admin on the project by the team path, and shares with a team of theirs:
    // still 403, only the org's owners and admins share its projects.
    expect(await roleOf(t, outsider, p.id)).toBe('admin');
    const own = await newTeam(t, outsider);
    expectProblem(
      await t.post(`/v2/teams/${own.id}/grants`, {
        token: outsider.token,
        body: { project_id: p.id, role: 'viewer' },
      }),
      403,
      'insufficient_role',
    );

    expectProblem(await t.del(`/v2/projects/${p.id}`, { token: admin.token }), 403);
    expectProblem(await t.del(`/v2/projects/${p.id}`, { token: member.token }), 403);
    expect((await t.del(`/v2/projects/${p.id}`, { token: owner.token })).status).toBe(204);
  });
});

describe('GET /v2/projects/<id>/access of an org project', () => {
  it('shows the org path in via beside team paths; owner is the org owner', async () => {
    const { owner, admin, member, outsider, org } = await orgWorld('member');
    const quiet = await newUser(t, 'quiet');
    const p = await newOrgProject(t, owner, org.id);
    const team = await newTeam(t, owner);
    await addMember(t, team.id, member, 'admin');
    await addMember(t, team.id, outsider, 'viewer');
    await share(t, team.id, p.id, 'admin');

    const r = await t.get(`/v2/projects/${p.id}/access`, { token: outsider.token });
    expect(r.status, r.text).toBe(200);
    expect(r.json.owner).toEqual({ user_id: owner.id, email: owner.email, name: owner.name });
    expect(r.json.owner_kind).toBe('org');
    expect(r.json.org).toEqual({ id: org.id, name: org.name, slug: org.slug, base_role: 'member' });
    expect(r.json.grants).toHaveLength(1);
    const by = new Map(r.json.members.map((m: { user_id: string }) => [m.user_id, m]));
    const orgVia = (org_role: string, role: string) => ({
      kind: 'org',
      source: 'org',
      org_id: org.id,
      org_role,
      base_role: 'member',
      team_id: null,
      team_role: null,
      grant_role: null,
      role,
    });
    // The org owner owns the team too: the org path, then the team path (capped by the grant).
    expect(by.get(owner.id)).toMatchObject({
      role: 'owner',
      via: [
        orgVia('owner', 'owner'),
        expect.objectContaining({ kind: 'team', team_role: 'owner', role: 'admin' }),
      ],
    });
    expect(by.get(admin.id)).toMatchObject({ role: 'admin', via: [orgVia('admin', 'admin')] });
    expect(by.get(member.id)).toMatchObject({
      role: 'admin',
      via: [
        orgVia('member', 'member'),
        expect.objectContaining({
          kind: 'team',
          team_id: team.id,
          team_role: 'admin',
          role: 'admin',
        }),
      ],
    });
    expect(by.get(outsider.id)).toMatchObject({
      role: 'viewer',
      via: [expect.objectContaining({ kind: 'team', org_id: null, role: 'viewer' })],
    });
    expect(by.has(quiet.id)).toBe(false);

    // base_role none: plain members reach nothing by the org path, and are not listed by it.
    await setBaseRole(org, 'none');
    const after = await t.get(`/v2/projects/${p.id}/access`, { token: owner.token });
    const ids = after.json.members.map((m: { user_id: string }) => m.user_id);
    expect(ids).toContain(admin.id);
    const m = after.json.members.find((x: { user_id: string }) => x.user_id === member.id);
    expect(m.via.map((v: { kind: string }) => v.kind)).toEqual(['team']);
  });

  it("a user's project lists its owner by kind owner, org null", async () => {
    const ann = await newUser(t, 'ann');
    const p = await newProject(t, ann);
    const r = await t.get(`/v2/projects/${p.id}/access`, { token: ann.token });
    expect(r.json).toMatchObject({ owner_kind: 'user', org: null });
    expect(r.json.members[0].via).toEqual([
      expect.objectContaining({ kind: 'owner', source: 'owner', org_id: null, role: 'owner' }),
    ]);
  });
});

describe('frames of an org project', () => {
  it("read, sync and start by the org's billing, not a user's", async () => {
    const { owner, admin, org } = await orgWorld('viewer');
    const p = await newOrgProject(t, owner, org.id);
    const space = await defaultSpace(t, admin, p.id);
    const agent = await cloudAgent(t, 'cloud-org');
    const frame = await newFrame(t, admin, p.id, space);
    await t.db
      .updateTable('frames')
      .set({ agent_id: agent.id })
      .where('id', '=', frame.id)
      .execute();
    const read = await t.get(framePath(frame), { token: admin.token });
    expect(read.status, read.text).toBe(200);
    expect(read.json.status).not.toBe('Suspended');
    expect((await sync(t, agent.token)).frames.map((f) => f.frame_id)).toContain(frame.id);

    // The frame's owner (a user) owes nothing: the org pays, so its status suspends the frame.
    await t.db
      .updateTable('teams')
      .set({ billing_status: 'past_due' })
      .where('id', '=', org.id)
      .execute();
    expect((await t.get(framePath(frame), { token: admin.token })).json.status).toBe('Suspended');
    const desired = (await sync(t, agent.token)).frames.find((f) => f.frame_id === frame.id);
    expect(desired?.desired_state).toBe('stopped');
    await t.post(`${framePath(frame)}/stop`, { token: admin.token });
    expectProblem(
      await t.post(`${framePath(frame)}/start`, { token: admin.token }),
      402,
      'billing_past_due',
    );
  });
});

describe('lowering base_role', () => {
  it('is obeyed on the next request, on this instance and on a second one (warm role memos)', async () => {
    const b = await testAppOn(t.url);
    try {
      const { owner, member, org } = await orgWorld('admin');
      const p = await newOrgProject(t, owner, org.id);
      const both = async (want: string | null) => {
        for (const app of [t, b])
          for (let i = 0; i < 2; i++) expect(await roleOf(app, member, p.id)).toBe(want);
      };
      await both('admin');
      expect(b.services.access.rememberedRoles()).toBeGreaterThan(0);
      for (const [base, want] of [
        ['member', 'member'],
        ['viewer', 'viewer'],
        ['none', null],
        ['admin', 'admin'],
      ] as const) {
        await setBaseRole(org, base);
        await both(want);
      }
      // Removing the member from the org takes effect at once, too.
      await t.db
        .deleteFrom('team_members')
        .where('team_id', '=', org.id)
        .where('user_id', '=', member.id)
        .execute();
      await both(null);
    } finally {
      await b.close();
    }
  });
});
