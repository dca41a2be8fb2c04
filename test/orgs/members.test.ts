// An organization's members (CONTRACT 3a): the team's owner guardrails, roles owner, admin and
// member only, admins manage, every member reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newUser } from '../helpers/factories.ts';
import { addOrgMember, newOrg } from '../helpers/orgs.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

async function world() {
  const owner = await newUser(t, 'owner');
  const admin = await newUser(t, 'admin');
  const member = await newUser(t, 'member');
  const outsider = await newUser(t, 'outsider');
  const org = await newOrg(t, owner);
  await addOrgMember(t, org.id, admin, 'admin');
  await addOrgMember(t, org.id, member, 'member');
  return { owner, admin, member, outsider, org };
}

describe('org members', () => {
  it('every member reads the member list, in pages; an outsider sees no org', async () => {
    const w = await world();
    const first = await t.get(`/v2/orgs/${w.org.id}/members?limit=2`, { token: w.member.token });
    expect(first.status, first.text).toBe(200);
    expect(first.json.data).toHaveLength(2);
    const rest = await t.get(
      `/v2/orgs/${w.org.id}/members?limit=2&cursor=${first.json.next_cursor}`,
      { token: w.member.token },
    );
    const roles = Object.fromEntries(
      [...first.json.data, ...rest.json.data].map((m: { user_id: string; role: string }) => [
        m.user_id,
        m.role,
      ]),
    );
    expect(roles).toEqual({
      [w.owner.id]: 'owner',
      [w.admin.id]: 'admin',
      [w.member.id]: 'member',
    });
    expect(rest.json.next_cursor).toBeNull();
    expectProblem(
      await t.get(`/v2/orgs/${w.org.id}/members`, { token: w.outsider.token }),
      404,
      'org_not_found',
    );
  });

  it('admins change roles between member and admin; viewer and owner are 422', async () => {
    const w = await world();
    const up = await t.patch(`/v2/orgs/${w.org.id}/members/${w.member.id}`, {
      token: w.admin.token,
      body: { role: 'admin' },
    });
    expect(up.status, up.text).toBe(200);
    expect(up.json).toMatchObject({ user_id: w.member.id, role: 'admin' });
    const down = await t.patch(`/v2/orgs/${w.org.id}/members/${w.member.id}`, {
      token: w.owner.token,
      body: { role: 'member' },
    });
    expect(down.json.role).toBe('member');
    for (const role of ['viewer', 'owner']) {
      const r = await t.patch(`/v2/orgs/${w.org.id}/members/${w.member.id}`, {
        token: w.owner.token,
        body: { role },
      });
      expectProblem(r, 422, 'role_not_allowed');
      expect(r.json.detail).toMatch(/member or admin/);
    }
    expectProblem(
      await t.patch(`/v2/orgs/${w.org.id}/members/${w.admin.id}`, {
        token: w.member.token,
        body: { role: 'member' },
      }),
      403,
      'insufficient_role',
    );
    expectProblem(
      await t.patch(`/v2/orgs/${w.org.id}/members/${w.outsider.id}`, {
        token: w.admin.token,
        body: { role: 'member' },
      }),
      404,
      'member_not_found',
    );
  });

  it("nobody changes or removes the owner's membership", async () => {
    const w = await world();
    expectProblem(
      await t.patch(`/v2/orgs/${w.org.id}/members/${w.owner.id}`, {
        token: w.admin.token,
        body: { role: 'admin' },
      }),
      403,
      'owner_immutable',
    );
    for (const who of [w.admin, w.owner])
      expectProblem(
        await t.del(`/v2/orgs/${w.org.id}/members/${w.owner.id}`, { token: who.token }),
        403,
        'owner_immutable',
      );
    const got = await t.get(`/v2/orgs/${w.org.id}`, { token: w.owner.token });
    expect(got.json).toMatchObject({ owner_id: w.owner.id, role: 'owner', member_count: 3 });
  });

  it('admins remove members; the removed member no longer sees the org', async () => {
    const w = await world();
    expectProblem(
      await t.del(`/v2/orgs/${w.org.id}/members/${w.admin.id}`, { token: w.member.token }),
      403,
      'insufficient_role',
    );
    const del = await t.del(`/v2/orgs/${w.org.id}/members/${w.member.id}`, {
      token: w.admin.token,
    });
    expect(del.status, del.text).toBe(204);
    expectProblem(await t.get(`/v2/orgs/${w.org.id}`, { token: w.member.token }), 404);
    expectProblem(
      await t.del(`/v2/orgs/${w.org.id}/members/${w.member.id}`, { token: w.admin.token }),
      404,
      'member_not_found',
    );
    const audit = await t.db
      .selectFrom('audit_events')
      .select('action')
      .where('team_id', '=', w.org.id)
      .execute();
    expect(audit.map((a) => a.action)).toContain('member.removed');
  });

  it('the database holds an org to owner, admin and member whatever the writer', async () => {
    const w = await world();
    const viewer = await newUser(t, 'viewer');
    await expect(
      t.db
        .insertInto('team_members')
        .values({ team_id: w.org.id, user_id: viewer.id, role: 'viewer', joined_at: t.clock.now() })
        .execute(),
    ).rejects.toThrow(/no viewer role/);
  });
});
