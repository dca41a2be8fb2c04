// Organizations over HTTP (CONTRACT 3a): create, list, read, rename and base_role, delete while
// empty, leave; one slug namespace with teams; team routes never serve an org.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newProject, newTeam, newUser } from '../helpers/factories.ts';
import { addOrgMember } from '../helpers/orgs.ts';
import { newId } from '../../src/ids.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

let n = 0;
const slug = () => `org-${process.pid}-${++n}-${Math.random().toString(36).slice(2, 8)}`;

async function createOrg(token: string, name = 'Acme') {
  const r = await t.post('/v2/orgs', { token, body: { name, slug: slug() } });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

/** A project the org owns, written straight into the database (projects.org_id). */
async function orgProject(orgId: string) {
  const now = t.clock.now();
  const id = newId('project', now);
  await t.db
    .insertInto('projects')
    .values({ id, name: 'P', owner_id: null, org_id: orgId, created_at: now })
    .execute();
  return id;
}

describe('organizations', () => {
  it('creates an org whose creator is its owner, with base_role viewer and active billing', async () => {
    const ann = await newUser(t, 'ann');
    const org = await createOrg(ann.token);
    expect(org).toMatchObject({
      name: 'Acme',
      owner_id: ann.id,
      base_role: 'viewer',
      billing_status: 'active',
      role: 'owner',
      member_count: 1,
    });
    expect(org.id).toMatch(/^org_/);
    const got = await t.get(`/v2/orgs/${org.id}`, { token: ann.token });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toEqual(org);
    const members = await t.get(`/v2/orgs/${org.id}/members`, { token: ann.token });
    expect(members.json.data).toEqual([
      expect.objectContaining({ user_id: ann.id, role: 'owner' }),
    ]);
  });

  it('lists my orgs with my role, paged, and never a team', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const a = await createOrg(ann.token, 'A');
    const b = await createOrg(bob.token, 'B');
    await addOrgMember(t, b.id, ann, 'admin');
    const team = await newTeam(t, ann);
    const first = await t.get('/v2/orgs?limit=1', { token: ann.token });
    expect(first.status, first.text).toBe(200);
    expect(first.json.data).toHaveLength(1);
    expect(first.json.next_cursor).toEqual(expect.any(String));
    const second = await t.get(`/v2/orgs?limit=1&cursor=${first.json.next_cursor}`, {
      token: ann.token,
    });
    const all = [...first.json.data, ...second.json.data];
    expect(all.map((o: { id: string }) => o.id).sort()).toEqual([a.id, b.id].sort());
    expect(all.find((o: { id: string }) => o.id === b.id)).toMatchObject({
      role: 'admin',
      member_count: 2,
    });
    expect(second.json.next_cursor).toBeNull();
    const teams = await t.get('/v2/teams', { token: ann.token });
    expect(teams.json.data.map((x: { id: string }) => x.id)).toEqual([team.id]);
  });

  it('shares one slug namespace with teams', async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    expectProblem(
      await t.post('/v2/orgs', { token: ann.token, body: { name: 'X', slug: team.slug } }),
      409,
      'slug_taken',
    );
    const org = await createOrg(ann.token);
    expectProblem(
      await t.post('/v2/teams', { token: ann.token, body: { name: 'X', slug: org.slug } }),
      409,
      'slug_taken',
    );
    expectProblem(
      await t.patch(`/v2/teams/${team.id}`, { token: ann.token, body: { slug: org.slug } }),
      409,
      'slug_taken',
    );
    const other = await createOrg(ann.token);
    expectProblem(
      await t.patch(`/v2/orgs/${other.id}`, { token: ann.token, body: { slug: team.slug } }),
      409,
      'slug_taken',
    );
    for (const bad of ['Acme', 'a--b', '-a', '', 'a'.repeat(64)])
      expectProblem(
        await t.post('/v2/orgs', { token: ann.token, body: { name: 'X', slug: bad } }),
        422,
      );
  });

  it('renames and sets base_role (admin), validating base_role', async () => {
    const ann = await newUser(t, 'ann');
    const adm = await newUser(t, 'adm');
    const mem = await newUser(t, 'mem');
    const org = await createOrg(ann.token);
    await addOrgMember(t, org.id, adm, 'admin');
    await addOrgMember(t, org.id, mem, 'member');
    for (const base_role of ['none', 'member', 'admin', 'viewer']) {
      const r = await t.patch(`/v2/orgs/${org.id}`, { token: adm.token, body: { base_role } });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({ base_role, role: 'admin' });
    }
    for (const base_role of ['owner', 'guest', '', null, 1])
      expectProblem(
        await t.patch(`/v2/orgs/${org.id}`, { token: adm.token, body: { base_role } }),
        422,
      );
    expectProblem(await t.patch(`/v2/orgs/${org.id}`, { token: adm.token, body: {} }), 422);
    expectProblem(
      await t.patch(`/v2/orgs/${org.id}`, { token: adm.token, body: { billing_status: 'active' } }),
      422,
    );
    const renamed = await t.patch(`/v2/orgs/${org.id}`, {
      token: ann.token,
      body: { name: 'Acme Inc' },
    });
    expect(renamed.json).toMatchObject({ name: 'Acme Inc', role: 'owner', member_count: 3 });
    expectProblem(
      await t.patch(`/v2/orgs/${org.id}`, { token: mem.token, body: { name: 'Mine' } }),
      403,
      'insufficient_role',
    );
    const audit = await t.db
      .selectFrom('audit_events')
      .select(['action', 'before', 'after'])
      .where('team_id', '=', org.id)
      .where('action', '=', 'org.updated')
      .orderBy('id')
      .execute();
    expect(audit).toHaveLength(5);
  });

  it("reads the org's audit log over HTTP, newest first, to its admins only", async () => {
    const ann = await newUser(t, 'ann');
    const adm = await newUser(t, 'adm');
    const mem = await newUser(t, 'mem');
    const org = await createOrg(ann.token);
    await addOrgMember(t, org.id, adm, 'admin');
    await addOrgMember(t, org.id, mem, 'member');
    const patched = await t.patch(`/v2/orgs/${org.id}`, {
      token: adm.token,
      body: { base_role: 'member' },
    });
    expect(patched.status, patched.text).toBe(200);
    const log = await t.get(`/v2/orgs/${org.id}/audit?limit=1`, { token: adm.token });
    expect(log.status, log.text).toBe(200);
    expect(log.json.data).toHaveLength(1);
    expect(log.json.data[0]).toMatchObject({ action: 'org.updated', actor_id: adm.id });
    const rest = await t.get(`/v2/orgs/${org.id}/audit?cursor=${log.json.next_cursor}`, {
      token: ann.token,
    });
    expect(rest.json.data.map((e: any) => e.action)).toContain('org.created');
    expectProblem(
      await t.get(`/v2/orgs/${org.id}/audit`, { token: mem.token }),
      403,
      'insufficient_role',
    );
    const team = await newTeam(t, ann, 'Not an org');
    expectProblem(await t.get(`/v2/orgs/${team.id}/audit`, { token: ann.token }), 404);
  });

  it('deletes an empty org (owner), and refuses one that owns a project with 409 org_not_empty', async () => {
    const ann = await newUser(t, 'ann');
    const adm = await newUser(t, 'adm');
    const org = await createOrg(ann.token);
    await addOrgMember(t, org.id, adm, 'admin');
    const project = await orgProject(org.id);
    expectProblem(
      await t.del(`/v2/orgs/${org.id}`, { token: adm.token }),
      403,
      'insufficient_role',
    );
    expectProblem(await t.del(`/v2/orgs/${org.id}`, { token: ann.token }), 409, 'org_not_empty');
    expect((await t.get(`/v2/orgs/${org.id}`, { token: ann.token })).status).toBe(200);
    await t.db.deleteFrom('projects').where('id', '=', project).execute();
    const del = await t.del(`/v2/orgs/${org.id}`, { token: ann.token });
    expect(del.status, del.text).toBe(204);
    expectProblem(await t.get(`/v2/orgs/${org.id}`, { token: ann.token }), 404, 'org_not_found');
    expectProblem(await t.get(`/v2/orgs/${org.id}`, { token: adm.token }), 404, 'org_not_found');
    const left = await t.db
      .selectFrom('team_members')
      .select('user_id')
      .where('team_id', '=', org.id)
      .execute();
    expect(left).toEqual([]);
  });

  it('the database refuses the delete too, whatever the service checked (ON DELETE RESTRICT)', async () => {
    const ann = await newUser(t, 'ann');
    const org = await createOrg(ann.token);
    await orgProject(org.id);
    await expect(t.db.deleteFrom('teams').where('id', '=', org.id).execute()).rejects.toThrow(
      /foreign key/,
    );
  });

  it('lets anyone but the owner leave', async () => {
    const ann = await newUser(t, 'ann');
    const mem = await newUser(t, 'mem');
    const org = await createOrg(ann.token);
    await addOrgMember(t, org.id, mem, 'member');
    expectProblem(
      await t.post(`/v2/orgs/${org.id}/leave`, { token: ann.token }),
      403,
      'owner_immutable',
    );
    expect((await t.post(`/v2/orgs/${org.id}/leave`, { token: mem.token })).status).toBe(204);
    expectProblem(await t.get(`/v2/orgs/${org.id}`, { token: mem.token }), 404, 'org_not_found');
    expect((await t.get(`/v2/orgs/${org.id}`, { token: ann.token })).json.member_count).toBe(1);
  });

  it('team routes never serve an org, org routes never a team, and an org takes no grant', async () => {
    const ann = await newUser(t, 'ann');
    const org = await createOrg(ann.token);
    const team = await newTeam(t, ann);
    const project = await newProject(t, ann);
    for (const path of [
      `/v2/teams/${org.id}`,
      `/v2/teams/${org.id}/members`,
      `/v2/teams/${org.id}/invitations`,
      `/v2/teams/${org.id}/grants`,
      `/v2/teams/${org.id}/audit`,
    ])
      expect((await t.get(path, { token: ann.token })).status, path).toBe(404);
    expectProblem(
      await t.post(`/v2/teams/${org.id}/grants`, {
        token: ann.token,
        body: { project_id: project.id, role: 'viewer' },
      }),
      404,
    );
    expectProblem(await t.del(`/v2/teams/${org.id}`, { token: ann.token }), 404);
    for (const path of [`/v2/orgs/${team.id}`, `/v2/orgs/${team.id}/members`])
      expect((await t.get(path, { token: ann.token })).status, path).toBe(404);
    // The same id-shaped check holds below HTTP: the access module reads the kind.
    const access = t.services.access;
    await expect(access.requireTeam(ann.id, org.id, 'team.read')).rejects.toMatchObject({
      status: 404,
    });
    await expect(access.requireOrg(ann.id, team.id, 'org.read')).rejects.toMatchObject({
      status: 404,
    });
    await expect(
      t.db
        .insertInto('grants')
        .values({
          id: newId('grant', t.clock.now()),
          team_id: org.id,
          project_id: project.id,
          role: 'viewer',
          created_by: null,
          created_at: t.clock.now(),
        })
        .execute(),
    ).rejects.toThrow(/organization/);
  });
});
