// Member lists are remembered whole per team version (src/teams/member-rosters.ts). Whatever
// changes what a list shows must show at once, through this instance or another one on the same
// database: joins, leaves, role changes, a member's new name or e-mail, on any page. A page from
// a roster is the text the database path answers, byte for byte.
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

/**
 * Pages read from the database that add up to the team's size start a roster read
 * (member-rosters.ts): read enough of them for these small teams, and wait for it.
 */
async function warm(app: typeof a, token: string, teamId: string, query = '') {
  for (let i = 0; i < 10; i++) {
    await names(app, token, teamId, query);
    await app.services.members.settled();
  }
}

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

    // Warm both instances, first page and second page; both hold the team's roster.
    for (const app of [a, b]) await warm(app, owner.token, team.id, '?limit=2');
    expect(a.services.members.heldMembers()).toBeGreaterThanOrEqual(3);
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
    // A list that fits on one page is read in one statement each time: no roster for it.
    const held = a.services.members.heldMembers();
    await warm(a, owner.token, t2.id);
    expect(a.services.members.heldMembers()).toBe(held);
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

  it('a page from a roster is the text of the database path, byte for byte, after any cursor', async () => {
    const c = await testAppOn(url); // no roster yet: its first reads come from the database
    try {
      const owner = await newUser(a, 'owner');
      const team = await newTeam(a, owner);
      const odd = [
        '"quoted" \\ back',
        'ünïcödé 🚀',
        'line\u2028sep',
        'ctl\u0001x',
        '<b>&</b>',
        'Ann',
      ];
      const people = [];
      for (const name of odd) {
        const u = await newUser(a, 'odd');
        await a.db.updateTable('users').set({ name }).where('id', '=', u.id).execute();
        await addMember(a, team.id, u, 'viewer');
        people.push(u);
      }
      const read = async (app: typeof a, query: string) => {
        const r = await app.get(`/v2/teams/${team.id}/members${query}`, { token: owner.token });
        expect(r.status, r.text).toBe(200);
        expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
        return r.text;
      };
      // c's two reads are both the database's (the roster read starts after the second).
      const fromDatabase = [await read(c, '?limit=3'), await read(c, '?limit=100')];
      const before = a.services.members.heldMembers();
      await warm(a, owner.token, team.id, '?limit=3');
      const held = a.services.members.heldMembers();
      expect(held - before).toBe(odd.length + 1); // this team's roster, owner included
      expect([await read(a, '?limit=3'), await read(a, '?limit=100')]).toEqual(fromDatabase);
      expect(a.services.members.heldMembers()).toBe(held);

      // Every page after every member, as the table's own order gives it.
      const order = await a.db
        .selectFrom('team_members')
        .select(['user_id', 'joined_at'])
        .where('team_id', '=', team.id)
        .orderBy('joined_at')
        .orderBy('user_id')
        .execute();
      const ids = order.map((m) => m.user_id);
      const cursorOf = (i: number) =>
        encodeCursor([at(order, i).joined_at.toISOString(), at(order, i).user_id]);
      for (let i = 0; i < order.length; i++) {
        const page = JSON.parse(await read(a, `?limit=2&cursor=${cursorOf(i)}`));
        expect(page.data.map((m: { user_id: string }) => m.user_id)).toEqual(
          ids.slice(i + 1, i + 3),
        );
        expect(page.next_cursor).toBe(i + 3 < order.length ? cursorOf(i + 2) : null);
      }

      // A cursor naming a member who has left is not in the new roster: the database answers.
      const gone = ids.indexOf(at(people, 2).id);
      const goneCursor = cursorOf(gone);
      const removed = await a.del(`/v2/teams/${team.id}/members/${at(people, 2).id}`, {
        token: owner.token,
      });
      expect(removed.status).toBe(204);
      await warm(a, owner.token, team.id, '?limit=3');
      const after = JSON.parse(await read(a, `?limit=2&cursor=${goneCursor}`));
      expect(after.data.map((m: { user_id: string }) => m.user_id)).toEqual(
        ids.slice(gone + 1, gone + 3),
      );
    } finally {
      await c.close();
    }
  });
});
