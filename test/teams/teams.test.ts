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

describe('teams', () => {
  it('creates a team whose creator is the owner, lists it with role and member count', async () => {
    const ann = await newUser(t, 'ann');
    const r = await t.post('/v2/teams', {
      token: ann.token,
      body: { name: 'Platform', slug: 'platform-team' },
    });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      name: 'Platform',
      slug: 'platform-team',
      owner_id: ann.id,
      role: 'owner',
      member_count: 1,
    });
    expect(r.json.id).toMatch(/^team_/);
    const list = await t.get('/v2/teams', { token: ann.token });
    expect(list.json).toEqual({
      data: [expect.objectContaining({ id: r.json.id, role: 'owner', member_count: 1 })],
      next_cursor: null,
    });
  });

  it('validates slug and name (422) and refuses a taken slug (409)', async () => {
    const ann = await newUser(t, 'ann');
    for (const slug of ['Upper', 'double--dash', '-lead', 'trail-', 'sp ace', 'a'.repeat(64), '']) {
      expectProblem(
        await t.post('/v2/teams', { token: ann.token, body: { name: 'x', slug } }),
        422,
        'validation_failed',
      );
    }
    expectProblem(
      await t.post('/v2/teams', {
        token: ann.token,
        body: { name: 'x'.repeat(101), slug: 'ok-slug-1' },
      }),
      422,
    );
    expect(
      (await t.post('/v2/teams', { token: ann.token, body: { name: 'x', slug: 'a'.repeat(63) } }))
        .status,
    ).toBe(201);
    expectProblem(
      await t.post('/v2/teams', { token: ann.token, body: { name: 'y', slug: 'a'.repeat(63) } }),
      409,
      'slug_taken',
    );
  });

  it('renames (admin), deletes (owner) with memberships, invitations and grants, leaving projects alone', async () => {
    const ann = await newUser(t, 'ann');
    const adm = await newUser(t, 'adm');
    const team = await newTeam(t, ann);
    await addMember(t, team.id, adm, 'admin');
    const project = await newProject(t, ann);
    await share(t, team.id, project.id, 'member');
    await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: 'someone@example.test', role: 'viewer' },
    });

    const renamed = await t.patch(`/v2/teams/${team.id}`, {
      token: adm.token,
      body: { name: 'Renamed' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ name: 'Renamed', role: 'admin', member_count: 2 });
    expectProblem(await t.patch(`/v2/teams/${team.id}`, { token: adm.token, body: {} }), 422);
    expectProblem(
      await t.del(`/v2/teams/${team.id}`, { token: adm.token }),
      403,
      'insufficient_role',
    );

    expect((await t.del(`/v2/teams/${team.id}`, { token: ann.token })).status).toBe(204);
    for (const table of ['team_members', 'invitations', 'grants'] as const) {
      const rows = await t.db
        .selectFrom(table)
        .select('team_id')
        .where('team_id', '=', team.id)
        .execute();
      expect(rows, table).toHaveLength(0);
    }
    expect((await t.get(`/v2/projects/${project.id}`, { token: ann.token })).json.role).toBe(
      'owner',
    );
    expectProblem(await t.get(`/v2/projects/${project.id}`, { token: adm.token }), 404);
    expectProblem(await t.get(`/v2/teams/${team.id}`, { token: ann.token }), 404);
  });

  it('keeps the owner guardrails: no owner role, no change or removal of the owner, owner cannot leave', async () => {
    const ann = await newUser(t, 'ann');
    const adm = await newUser(t, 'adm');
    const mem = await newUser(t, 'mem');
    const team = await newTeam(t, ann);
    await addMember(t, team.id, adm, 'admin');
    await addMember(t, team.id, mem, 'member');

    expectProblem(
      await t.patch(`/v2/teams/${team.id}/members/${mem.id}`, {
        token: ann.token,
        body: { role: 'owner' },
      }),
      422,
      'role_not_allowed',
    );
    expectProblem(
      await t.patch(`/v2/teams/${team.id}/members/${ann.id}`, {
        token: adm.token,
        body: { role: 'viewer' },
      }),
      403,
      'owner_immutable',
    );
    expectProblem(
      await t.patch(`/v2/teams/${team.id}/members/${ann.id}`, {
        token: ann.token,
        body: { role: 'admin' },
      }),
      403,
      'owner_immutable',
    );
    expectProblem(
      await t.del(`/v2/teams/${team.id}/members/${ann.id}`, { token: adm.token }),
      403,
      'owner_immutable',
    );
    expectProblem(
      await t.post(`/v2/teams/${team.id}/leave`, { token: ann.token }),
      403,
      'owner_immutable',
    );

    const promoted = await t.patch(`/v2/teams/${team.id}/members/${mem.id}`, {
      token: adm.token,
      body: { role: 'admin' },
    });
    expect(promoted.json).toMatchObject({ user_id: mem.id, role: 'admin' });
    const demoted = await t.patch(`/v2/teams/${team.id}/members/${mem.id}`, {
      token: adm.token,
      body: { role: 'viewer' },
    });
    expect(demoted.json.role).toBe('viewer');
    expectProblem(
      await t.patch(`/v2/teams/${team.id}/members/${adm.id}`, {
        token: mem.token,
        body: { role: 'viewer' },
      }),
      403,
      'insufficient_role',
    );

    expect((await t.post(`/v2/teams/${team.id}/leave`, { token: mem.token })).status).toBe(204);
    expectProblem(await t.get(`/v2/teams/${team.id}`, { token: mem.token }), 404);
    expect(
      (await t.del(`/v2/teams/${team.id}/members/${adm.id}`, { token: ann.token })).status,
    ).toBe(204);
    const members = await t.get(`/v2/teams/${team.id}/members`, { token: ann.token });
    expect(members.json.data).toEqual([
      expect.objectContaining({ user_id: ann.id, role: 'owner', email: ann.email }),
    ]);
  });

  it('pages lists with limit and cursor', async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const people = await Promise.all(Array.from({ length: 5 }, (_, i) => newUser(t, `p${i}`)));
    for (const p of people) await addMember(t, team.id, p, 'viewer');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await t.get(
        `/v2/teams/${team.id}/members?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { token: ann.token },
      );
      expect(r.status).toBe(200);
      expect(r.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.json.data.map((m: any) => m.user_id));
      cursor = r.json.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    expectProblem(
      await t.get(`/v2/teams/${team.id}/members?cursor=garbage`, { token: ann.token }),
      422,
      'invalid_cursor',
    );
  });

  it('writes an audit record for every change, readable by admins only, newest first', async () => {
    const ann = await newUser(t, 'ann');
    const mem = await newUser(t, 'mem');
    const team = await newTeam(t, ann);
    await addMember(t, team.id, mem, 'member');
    await t.patch(`/v2/teams/${team.id}/members/${mem.id}`, {
      token: ann.token,
      body: { role: 'viewer' },
      headers: { 'x-request-id': 'req-audit-1' },
    });
    await t.patch(`/v2/teams/${team.id}`, { token: ann.token, body: { name: 'New name' } });
    const audit = await t.get(`/v2/teams/${team.id}/audit`, { token: ann.token });
    expect(audit.status).toBe(200);
    expect(audit.json.data.map((e: any) => e.action)).toEqual([
      'team.updated',
      'member.role_changed',
      'team.created',
    ]);
    expect(audit.json.data[1]).toMatchObject({
      actor_id: ann.id,
      target_id: mem.id,
      before: { role: 'member' },
      after: { role: 'viewer' },
      request_id: 'req-audit-1',
    });
    expectProblem(await t.get(`/v2/teams/${team.id}/audit`, { token: mem.token }), 403);
  });
});
