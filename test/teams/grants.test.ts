import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  share,
} from '../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe('grants and effective access', () => {
  it('the grant caps the team role: spec section 3 rules 1-4', async () => {
    const owner = await newUser(t, 'owner');
    const project = await newProject(t, owner);
    const cases: Array<
      [team: 'viewer' | 'member' | 'admin', grant: 'viewer' | 'member' | 'admin', effective: string]
    > = [
      ['viewer', 'admin', 'viewer'],
      ['admin', 'viewer', 'viewer'],
      ['member', 'admin', 'member'],
      ['admin', 'admin', 'admin'],
    ];
    for (const [teamRole, grantRole, effective] of cases) {
      const team = await newTeam(t, owner);
      const u = await newUser(t, 'u');
      await addMember(t, team.id, u, teamRole);
      const g = await t.post(`/v2/teams/${team.id}/grants`, {
        token: owner.token,
        body: { project_id: project.id, role: grantRole },
      });
      expect(g.status, g.text).toBe(201);
      const p = await t.get(`/v2/projects/${project.id}`, { token: u.token });
      expect(p.json.role, `${teamRole} x ${grantRole}`).toBe(effective);
      const list = await t.get('/v2/projects', { token: u.token });
      expect(list.json.data).toEqual([
        expect.objectContaining({ id: project.id, role: effective }),
      ]);
    }
  });

  it('takes the best of several teams, and 404s when nothing reaches the project', async () => {
    const owner = await newUser(t, 'owner');
    const u = await newUser(t, 'u');
    const stranger = await newUser(t, 'stranger');
    const project = await newProject(t, owner);
    const a = await newTeam(t, owner);
    const b = await newTeam(t, owner);
    await addMember(t, a.id, u, 'admin');
    await addMember(t, b.id, u, 'member');
    await share(t, a.id, project.id, 'viewer');
    await share(t, b.id, project.id, 'admin');
    expect((await t.get(`/v2/projects/${project.id}`, { token: u.token })).json.role).toBe(
      'member',
    );
    expectProblem(
      await t.get(`/v2/projects/${project.id}`, { token: stranger.token }),
      404,
      'project_not_found',
    );
    expectProblem(
      await t.get(`/v2/projects/prj_01NOTAREALPROJECT0000000000`, { token: stranger.token }),
      404,
      'project_not_found',
    );

    const access = await t.get(`/v2/projects/${project.id}/access`, { token: u.token });
    expect(access.status).toBe(200);
    expect(access.json.owner.user_id).toBe(owner.id);
    expect(access.json.grants).toHaveLength(2);
    const me = access.json.members.find((m: any) => m.user_id === u.id);
    expect(me.role).toBe('member');
    expect(me.via.map((v: any) => v.role).sort()).toEqual(['member', 'viewer']);
  });

  it('refuses owner grants (422), second grants (409), grants of projects not owned (403/404)', async () => {
    const owner = await newUser(t, 'owner');
    const adm = await newUser(t, 'adm');
    const team = await newTeam(t, owner);
    await addMember(t, team.id, adm, 'admin');
    const project = await newProject(t, owner);
    const admProject = await newProject(t, adm);
    expectProblem(
      await t.post(`/v2/teams/${team.id}/grants`, {
        token: owner.token,
        body: { project_id: project.id, role: 'owner' },
      }),
      422,
      'role_not_allowed',
    );
    expect(
      (
        await t.post(`/v2/teams/${team.id}/grants`, {
          token: owner.token,
          body: { project_id: project.id, role: 'viewer' },
        })
      ).status,
    ).toBe(201);
    expectProblem(
      await t.post(`/v2/teams/${team.id}/grants`, {
        token: owner.token,
        body: { project_id: project.id, role: 'admin' },
      }),
      409,
      'grant_exists',
    );
    // adm reaches project (viewer through the grant) but does not own it: 403. An unknown project: 404.
    const other = await newTeam(t, adm);
    expectProblem(
      await t.post(`/v2/teams/${other.id}/grants`, {
        token: adm.token,
        body: { project_id: project.id, role: 'viewer' },
      }),
      403,
    );
    expectProblem(
      await t.post(`/v2/teams/${other.id}/grants`, {
        token: adm.token,
        body: { project_id: 'prj_nope', role: 'viewer' },
      }),
      404,
    );
    // an admin may share a project they own
    expect(
      (
        await t.post(`/v2/teams/${team.id}/grants`, {
          token: adm.token,
          body: { project_id: admProject.id, role: 'member' },
        })
      ).status,
    ).toBe(201);
  });

  it('lets a team admin lower or remove a grant, but only the project owner raise it', async () => {
    const owner = await newUser(t, 'owner');
    const adm = await newUser(t, 'adm');
    const viewer = await newUser(t, 'viewer');
    const team = await newTeam(t, owner);
    await addMember(t, team.id, adm, 'admin');
    await addMember(t, team.id, viewer, 'viewer');
    const project = await newProject(t, owner);
    const g = (
      await t.post(`/v2/teams/${team.id}/grants`, {
        token: owner.token,
        body: { project_id: project.id, role: 'member' },
      })
    ).json;

    const grants = await t.get(`/v2/teams/${team.id}/grants`, { token: viewer.token });
    expect(grants.json.data).toEqual([
      expect.objectContaining({ id: g.id, project_id: project.id, role: 'member' }),
    ]);
    expectProblem(
      await t.patch(`/v2/teams/${team.id}/grants/${g.id}`, {
        token: viewer.token,
        body: { role: 'viewer' },
      }),
      403,
    );
    expectProblem(
      await t.patch(`/v2/teams/${team.id}/grants/${g.id}`, {
        token: adm.token,
        body: { role: 'admin' },
      }),
      403,
    );
    expectProblem(
      await t.patch(`/v2/teams/${team.id}/grants/${g.id}`, {
        token: adm.token,
        body: { role: 'owner' },
      }),
      422,
      'role_not_allowed',
    );
    expect(
      (
        await t.patch(`/v2/teams/${team.id}/grants/${g.id}`, {
          token: adm.token,
          body: { role: 'viewer' },
        })
      ).json.role,
    ).toBe('viewer');
    expect(
      (
        await t.patch(`/v2/teams/${team.id}/grants/${g.id}`, {
          token: owner.token,
          body: { role: 'admin' },
        })
      ).json.role,
    ).toBe('admin');
    expect((await t.get(`/v2/projects/${project.id}`, { token: adm.token })).json.role).toBe(
      'admin',
    );
    expect((await t.del(`/v2/teams/${team.id}/grants/${g.id}`, { token: adm.token })).status).toBe(
      204,
    );
    expectProblem(await t.get(`/v2/projects/${project.id}`, { token: adm.token }), 404);
    expectProblem(await t.del(`/v2/teams/${team.id}/grants/${g.id}`, { token: adm.token }), 404);
  });
});
