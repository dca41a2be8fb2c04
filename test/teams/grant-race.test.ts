// Issue 12, item 8: the project owner lowers a grant while a team admin (not the project owner)
// re-sends the grant's old role. A team admin may lower a grant but only the project owner may
// raise it, and "raise" is judged against the role the write replaces, read under a row lock in
// the write's transaction. So whatever the order, the lowering holds:
//   admin first, owner second: admin 200 (member -> member), owner 200 (member -> viewer);
//   owner first, admin second: owner 200 (member -> viewer), admin 403 (viewer -> member is a raise).
// The final role is viewer in every round, and the audit trail is that of one of the two orders.
// Before the fix the admin's previous role was read outside the transaction, so a stale `member`
// let its write land after the lowering: the final role was member.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { addMember, expectProblem, newProject, newTeam, newUser } from '../helpers/factories.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const ROUNDS = 20;

describe('grant role changes under concurrency', () => {
  it(`the owner's lowering is never undone by an admin re-sending the old role (${ROUNDS} rounds)`, async () => {
    const owner = await newUser(t, 'owner');
    const adm = await newUser(t, 'adm');
    const team = await newTeam(t, owner);
    await addMember(t, team.id, adm, 'admin');
    const orders = { adminFirst: 0, ownerFirst: 0 };

    for (let round = 0; round < ROUNDS; round++) {
      const project = await newProject(t, owner, `P${round}`);
      const g = await t.post(`/v2/teams/${team.id}/grants`, {
        token: owner.token,
        body: { project_id: project.id, role: 'member' },
      });
      expect(g.status, g.text).toBe(201);
      const url = `/v2/teams/${team.id}/grants/${g.json.id}`;

      // Alternate who is sent first, so that both interleavings get their chance.
      const lower = () => t.patch(url, { token: owner.token, body: { role: 'viewer' } });
      const resend = () => t.patch(url, { token: adm.token, body: { role: 'member' } });
      const [byOwner, byAdmin] =
        round % 2 === 0
          ? await Promise.all([lower(), resend()])
          : await Promise.all([resend(), lower()]).then(([a, o]) => [o, a] as const);

      const final = await t.db
        .selectFrom('grants')
        .select('role')
        .where('id', '=', g.json.id)
        .executeTakeFirstOrThrow();
      const audits = await t.db
        .selectFrom('audit_events')
        .select(['actor_id', 'before', 'after'])
        .where('target_id', '=', g.json.id)
        .where('action', '=', 'grant.role_changed')
        .execute();

      expect(byOwner.status, `round ${round}: ${byOwner.text}`).toBe(200);
      expect(byOwner.json.role).toBe('viewer');
      expect(final.role, `round ${round}: owner ${byOwner.status}, admin ${byAdmin.status}`).toBe(
        'viewer',
      );
      // The owner's change always replaced `member`: in either order nothing else changed it before.
      expect(audits.find((a) => a.actor_id === owner.id)).toMatchObject({
        before: { role: 'member' },
        after: { role: 'viewer' },
      });
      if (byAdmin.status === 200) {
        orders.adminFirst++;
        expect(byAdmin.json.role).toBe('member');
        expect(audits).toHaveLength(2);
        expect(audits.find((a) => a.actor_id === adm.id)).toMatchObject({
          before: { role: 'member' },
          after: { role: 'member' },
        });
      } else {
        orders.ownerFirst++;
        expectProblem(byAdmin, 403);
        expect(audits).toHaveLength(1);
      }
    }
    expect(orders.adminFirst + orders.ownerFirst).toBe(ROUNDS);
  });

  it('concurrent lowerings by an admin and raises by the owner end on the role of the last writer', async () => {
    // Both writes are allowed; the audit trail must chain (each change replaced the previous one's
    // result) and the final role is the last change's.
    const owner = await newUser(t, 'owner');
    const adm = await newUser(t, 'adm');
    const team = await newTeam(t, owner);
    await addMember(t, team.id, adm, 'admin');
    for (let round = 0; round < ROUNDS / 2; round++) {
      const project = await newProject(t, owner, `Q${round}`);
      const g = await t.post(`/v2/teams/${team.id}/grants`, {
        token: owner.token,
        body: { project_id: project.id, role: 'member' },
      });
      const url = `/v2/teams/${team.id}/grants/${g.json.id}`;
      const rs = await Promise.all([
        t.patch(url, { token: owner.token, body: { role: 'admin' } }),
        t.patch(url, { token: adm.token, body: { role: 'viewer' } }),
      ]);
      for (const r of rs) expect(r.status, r.text).toBe(200);
      const final = (
        await t.db
          .selectFrom('grants')
          .select('role')
          .where('id', '=', g.json.id)
          .executeTakeFirstOrThrow()
      ).role;
      const audits = await t.db
        .selectFrom('audit_events')
        .select(['before', 'after'])
        .where('target_id', '=', g.json.id)
        .where('action', '=', 'grant.role_changed')
        .execute();
      expect(audits).toHaveLength(2);
      const [first, second] =
        (at(audits, 0).before as any).role === 'member'
          ? [at(audits, 0), at(audits, 1)]
          : [at(audits, 1), at(audits, 0)];
      expect((first.before as any).role).toBe('member');
      expect((second.before as any).role, JSON.stringify(audits)).toBe((first.after as any).role);
      expect(final).toBe((second.after as any).role);
    }
  });
});
