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

describe('projects and spaces', () => {
  it('creates a project with a default space; lists owned and shared projects with roles', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const p = await t.post('/v2/projects', { token: ann.token, body: { name: 'web' } });
    expect(p.status).toBe(201);
    expect(p.json).toMatchObject({ name: 'web', owner_id: ann.id, role: 'owner' });
    const spaces = await t.get(`/v2/projects/${p.json.id}/spaces`, { token: ann.token });
    expect(spaces.json.data.map((s: any) => s.name)).toEqual(['default']);

    const bobs = await newProject(t, bob, 'bobs');
    const team = await newTeam(t, bob);
    await addMember(t, team.id, ann, 'member');
    await share(t, team.id, bobs.id, 'viewer');
    const list = await t.get('/v2/projects', { token: ann.token });
    expect(list.json.data.map((x: any) => [x.id, x.role])).toEqual([
      [p.json.id, 'owner'],
      [bobs.id, 'viewer'],
    ]);
  });

  it('applies the role matrix to spaces and project settings', async () => {
    const owner = await newUser(t, 'owner');
    const project = await newProject(t, owner);
    const team = await newTeam(t, owner);
    await share(t, team.id, project.id, 'admin');
    const [viewer, member, admin] = await Promise.all([
      newUser(t, 'viewer'),
      newUser(t, 'member'),
      newUser(t, 'admin'),
    ]);
    await addMember(t, team.id, viewer, 'viewer');
    await addMember(t, team.id, member, 'member');
    await addMember(t, team.id, admin, 'admin');

    expectProblem(
      await t.post(`/v2/projects/${project.id}/spaces`, {
        token: member.token,
        body: { name: 'staging' },
      }),
      403,
    );
    const space = await t.post(`/v2/projects/${project.id}/spaces`, {
      token: admin.token,
      body: { name: 'staging' },
    });
    expect(space.status).toBe(201);
    expectProblem(
      await t.post(`/v2/projects/${project.id}/spaces`, {
        token: admin.token,
        body: { name: 'staging' },
      }),
      409,
      'space_name_taken',
    );
    expect(
      (await t.get(`/v2/projects/${project.id}/spaces/${space.json.id}`, { token: viewer.token }))
        .json.name,
    ).toBe('staging');
    expect(
      (
        await t.patch(`/v2/projects/${project.id}/spaces/${space.json.id}`, {
          token: admin.token,
          body: { name: 'stage' },
        })
      ).json.name,
    ).toBe('stage');
    expectProblem(
      await t.patch(`/v2/projects/${project.id}`, { token: member.token, body: { name: 'x' } }),
      403,
    );
    expect(
      (
        await t.patch(`/v2/projects/${project.id}`, {
          token: admin.token,
          body: { name: 'renamed' },
        })
      ).json,
    ).toMatchObject({ name: 'renamed', role: 'admin' });
    expectProblem(await t.del(`/v2/projects/${project.id}`, { token: admin.token }), 403);
    expect(
      (await t.del(`/v2/projects/${project.id}/spaces/${space.json.id}`, { token: admin.token }))
        .status,
    ).toBe(204);
    expectProblem(
      await t.get(`/v2/projects/${project.id}/spaces/${space.json.id}`, { token: admin.token }),
      404,
    );
    expect((await t.del(`/v2/projects/${project.id}`, { token: owner.token })).status).toBe(204);
    expectProblem(await t.get(`/v2/projects/${project.id}`, { token: owner.token }), 404);
    expect(
      await t.db.selectFrom('grants').select('id').where('project_id', '=', project.id).execute(),
    ).toHaveLength(0);
  });
});
