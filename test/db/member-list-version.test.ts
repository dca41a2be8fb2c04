// The `user_shown_in_teams` trigger (migrations/0003): a member's e-mail or name is part of
// every member list the member is in, and those lists are remembered per team version
// (src/teams/member-rosters.ts). The trigger moves the version of each of the user's teams when
// one changes. Today the e-mail changes when an account that never proved its address loses
// it to one that did (releaseAddress); without the trigger, a remembered page would go on
// showing the address the account no longer holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testApp, type TestApp } from '../helpers/app.ts';
import { addMember, newTeam, newUser } from '../helpers/factories.ts';
import { releaseAddress } from '../../src/identity/address-claims.ts';
import { transaction } from '../../src/db/database.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

const versionOf = async (teamId: string) =>
  Number(
    (
      await t.db
        .selectFrom('teams')
        .select('members_version')
        .where('id', '=', teamId)
        .executeTakeFirstOrThrow()
    ).members_version,
  );

describe('user_shown_in_teams', () => {
  it('is installed on users, for e-mail and name', async () => {
    const { rows } = await sql<{ def: string }>`
      select pg_get_triggerdef(oid) as def from pg_trigger
      where tgname = 'user_shown_in_teams' and tgrelid = 'users'::regclass`.execute(t.db);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.def).toMatch(/AFTER UPDATE OF email, name ON public\.users/);
  });

  it('moves the version of every team of the user whose e-mail or name changes', async () => {
    const owner = await newUser(t, 'owner');
    const member = await newUser(t, 'member');
    const a = await newTeam(t, owner, 'A');
    const b = await newTeam(t, owner, 'B');
    await addMember(t, a.id, member, 'viewer');
    await addMember(t, b.id, member, 'member');
    const [va, vb] = [await versionOf(a.id), await versionOf(b.id)];

    await t.db.updateTable('users').set({ name: 'Renamed' }).where('id', '=', member.id).execute();
    expect([await versionOf(a.id), await versionOf(b.id)]).toEqual([va + 1, vb + 1]);

    // Columns no member list shows, and an update that changes nothing, leave it.
    await t.db
      .updateTable('users')
      .set({ billing_status: 'past_due', name: 'Renamed' })
      .where('id', '=', member.id)
      .execute();
    expect([await versionOf(a.id), await versionOf(b.id)]).toEqual([va + 1, vb + 1]);
  });

  it('keeps a remembered member page from showing an address the member lost', async () => {
    const owner = await newUser(t, 'owner');
    const member = await newUser(t, 'member');
    const team = await newTeam(t, owner, 'Shown');
    await addMember(t, team.id, member, 'viewer');
    const emails = async () => {
      const r = await t.get(`/v2/teams/${team.id}/members`, { token: owner.token });
      expect(r.status, r.text).toBe(200);
      return (r.json.data as Array<{ email: string }>).map((m) => m.email).sort();
    };
    expect(await emails()).toContain(member.email);
    expect(await emails()).toContain(member.email); // now served from the remembered page

    await transaction(t.db, (trx) => releaseAddress(trx, member, member.email, t.clock.now()));
    const shown = await emails();
    expect(shown).not.toContain(member.email);
    expect(shown).toContain(`${member.id.toLowerCase()}@released.invalid`);
  });
});

// migrations/0019: each membership holds its user's e-mail and name, for member pages read
// from one index. The copy is the database's to keep.
describe('team_member_names', () => {
  const copies = async (userId: string) =>
    t.db
      .selectFrom('team_members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['m.team_id', 'm.email', 'm.name', 'u.email as user_email', 'u.name as user_name'])
      .where('m.user_id', '=', userId)
      .execute();

  it("is the user's whatever an insert or update says", async () => {
    const owner = await newUser(t, 'owner');
    const member = await newUser(t, 'member');
    const team = await newTeam(t, owner, 'Copies');
    await sql`insert into team_members (team_id, user_id, role, joined_at, email, name)
      values (${team.id}, ${member.id}, 'viewer', now(), 'forged@example.test', 'Forged')`.execute(
      t.db,
    );
    await sql`update team_members set email = 'forged@example.test'
      where user_id = ${member.id}`.execute(t.db);
    const [row] = await copies(member.id);
    expect(row).toMatchObject({ email: member.email, name: row!.user_name });
  });

  it('follows a new e-mail or name, without moving access versions', async () => {
    const owner = await newUser(t, 'owner');
    const member = await newUser(t, 'member');
    const a = await newTeam(t, owner, 'A');
    const b = await newTeam(t, owner, 'B');
    await addMember(t, a.id, member, 'viewer');
    await addMember(t, b.id, member, 'admin');
    const access = () =>
      t.db.selectFrom('users').select('access_version').where('id', '=', member.id).execute();
    const before = await access();
    await t.db
      .updateTable('users')
      .set({ name: 'New Name', email: `new.${member.email}` })
      .where('id', '=', member.id)
      .execute();
    const rows = await copies(member.id);
    expect(rows).toHaveLength(2);
    for (const r of rows) expect([r.email, r.name]).toEqual([`new.${member.email}`, 'New Name']);
    expect(await access()).toEqual(before);
    // A role change still moves them.
    await t.db
      .updateTable('team_members')
      .set({ role: 'member' })
      .where('team_id', '=', a.id)
      .where('user_id', '=', member.id)
      .execute();
    expect(Number((await access())[0]!.access_version)).toBe(Number(before[0]!.access_version) + 1);
  });

  it('holds when a membership is added while the e-mail changes', async () => {
    const owner = await newUser(t, 'owner');
    const member = await newUser(t, 'member');
    const team = await newTeam(t, owner, 'Race');
    // The rename is made and held uncommitted; the membership is added meanwhile. Without the
    // lock in the trigger the insert would copy the committed (old) address and commit after.
    let updated!: () => void;
    let commit!: () => void;
    const made = new Promise<void>((r) => (updated = r));
    const held = new Promise<void>((r) => (commit = r));
    const rename = t.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set({ email: `renamed.${member.email}` })
        .where('id', '=', member.id)
        .execute();
      updated();
      await held;
    });
    await made;
    const join = addMember(t, team.id, member, 'member');
    let joined = false;
    join.then(
      () => (joined = true),
      () => (joined = true),
    );
    // The insert waits for the rename's row lock (taken by the trigger); without that lock it
    // ends at once, and the check below says what it then copied.
    await waitFor("the membership to wait for the rename's lock, or to end", async () => {
      if (joined) return 'ended';
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`.execute(t.db);
      return rows[0]!.n > 0 && 'waiting';
    });
    commit();
    await Promise.all([rename, join]);
    const [row] = await copies(member.id);
    expect(row).toMatchObject({ email: `renamed.${member.email}`, user_email: row!.email });
  });
});
