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
