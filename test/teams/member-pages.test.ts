// Member lists are remembered per team version (src/teams/member-pages.ts). Whatever changes
// what a list shows must show at once, through this instance or another one on the same
// database: joins, leaves, role changes, a member's new name or e-mail, on any page.
import { afterAll, describe, expect, it } from 'vitest';
import { testAppOn } from '../helpers/app.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { addMember, newTeam, newUser } from '../helpers/factories.ts';
import { at } from '../helpers/checked.ts';
import { encodeCursor } from '../../src/paging.ts';

const url = await freshDatabaseUrl();
const a = await testAppOn(url);
const b = await testAppOn(url); // another instance: its own memory, the same database
afterAll(async () => {
  await a.close();
  await b.close();
});

const names = async (app: typeof a, token: string, teamId: string, query = '') => {
  const r = await app.get(`/v2/teams/${teamId}/members${query}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.json as {
    data: Array<{ user_id: string; name: string; email: string; role: string }>;
    next_cursor: string | null;
  };
};

describe('member pages', () => {
  it('show every change at once, on both instances and on later pages', async () => {
    const owner = await newUser(a, 'owner');
    const team = await newTeam(a, owner);
    const [ann, bob, cy] = [
      await newUser(a, 'ann'),
      await newUser(a, 'bob'),
      await newUser(a, 'cy'),
    ];
    await addMember(a, team.id, ann, 'viewer');
    await addMember(a, team.id, bob, 'member');

    // Warm both instances, first page and second page.
    const first = await names(a, owner.token, team.id, '?limit=2');
    expect(first.data.map((m) => m.user_id)).toEqual([owner.id, ann.id]);
    expect((await names(b, owner.token, team.id, '?limit=2')).data.map((m) => m.user_id)).toEqual([
      owner.id,
      ann.id,
    ]);
    const cursor = `?limit=2&cursor=${first.next_cursor}`;
    expect((await names(b, owner.token, team.id, cursor)).data.map((m) => m.user_id)).toEqual([
      bob.id,
    ]);

    // A role change through instance a shows on b.
    const patched = await a.patch(`/v2/teams/${team.id}/members/${ann.id}`, {
      token: owner.token,
      body: { role: 'admin' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(
      (await names(b, owner.token, team.id, '?limit=2')).data.find((m) => m.user_id === ann.id)
        ?.role,
    ).toBe('admin');

    // A join shows on the later page of both.
    await addMember(a, team.id, cy, 'viewer');
    for (const app of [a, b])
      expect((await names(app, owner.token, team.id, cursor)).data.map((m) => m.user_id)).toEqual([
        bob.id,
        cy.id,
      ]);

    // A member's new name and e-mail (written outside the API) show too.
    await a.db
      .updateTable('users')
      .set({ name: 'Robert', email: `robert.${Date.now()}@example.test` })
      .where('id', '=', bob.id)
      .execute();
    for (const app of [a, b])
      expect(at((await names(app, owner.token, team.id, cursor)).data, 0).name).toBe('Robert');

    // A removal: gone from every page, and the removed member no longer reads the list.
    const removed = await b.del(`/v2/teams/${team.id}/members/${bob.id}`, { token: owner.token });
    expect(removed.status, removed.text).toBe(204);
    for (const app of [a, b])
      expect((await names(app, owner.token, team.id, cursor)).data.map((m) => m.user_id)).toEqual([
        cy.id,
      ]);
    expect((await a.get(`/v2/teams/${team.id}/members?limit=2`, { token: bob.token })).status).toBe(
      404,
    );
  });

  it('never serve one team the pages of another', async () => {
    const owner = await newUser(a, 'owner');
    const [t1, t2] = [await newTeam(a, owner, 'One'), await newTeam(a, owner, 'Two')];
    const only = await newUser(a, 'only');
    await addMember(a, t2.id, only, 'viewer');
    expect((await names(a, owner.token, t1.id)).data.map((m) => m.user_id)).toEqual([owner.id]);
    expect((await names(a, owner.token, t2.id)).data.map((m) => m.user_id)).toEqual([
      owner.id,
      only.id,
    ]);
  });

  it('a page not held yet is read with the access check, and says the same (issue 13)', async () => {
    const owner = await newUser(a, 'owner');
    const team = await newTeam(a, owner);
    const [viewer, outsider] = [await newUser(a, 'viewer'), await newUser(a, 'outsider')];
    await addMember(a, team.id, viewer, 'viewer');
    const first = await names(a, viewer.token, team.id, '?limit=1');
    const last = `?limit=1&cursor=${first.next_cursor}`;
    // On a, the second read of each page is the held one; b reads each for the first time.
    for (const app of [a, a, b]) {
      expect(
        (await names(app, viewer.token, team.id, '?limit=1')).data.map((m) => m.user_id),
      ).toEqual([owner.id]);
      const raw = await app.get(`/v2/teams/${team.id}/members${last}`, { token: viewer.token });
      expect(raw.headers['content-type']).toBe('application/json; charset=utf-8');
      const page = await names(app, viewer.token, team.id, last);
      expect(page).toEqual({
        data: [expect.objectContaining({ user_id: viewer.id })],
        next_cursor: null,
      });
      const missing = await app.get(`/v2/teams/${team.id}/members${last}`, {
        token: outsider.token,
      });
      expect(missing.status).toBe(404);
      expect(missing.json.code).toBe('team_not_found');
    }
    // Past the last member: an empty page of a team that exists, not a 404.
    const lastRow = at((await names(b, viewer.token, team.id, last)).data, 0) as unknown as {
      user_id: string;
      joined_at: string;
    };
    const beyond = `?limit=1&cursor=${encodeCursor([lastRow.joined_at, lastRow.user_id])}`;
    for (const app of [b, b])
      expect(await names(app, viewer.token, team.id, beyond)).toEqual({
        data: [],
        next_cursor: null,
      });
  });
});
