// Races: many requests at once through the HTTP layer, then the database is asked whether its
// invariants held (one grant per team and project, unique slugs, one open invitation per
// address, exactly one owner per team and it is teams.owner_id). The last block bypasses the
// services and shows the database itself refuses to break the owner and grant invariants.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { testApp, type Reply, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  newProject,
  newTeam,
  newUser,
  type TestUser,
} from '../helpers/factories.ts';
import { at } from '../helpers/checked.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const N = 20;
const statuses = (rs: Reply[]) => rs.map((r) => r.status).sort((a, b) => a - b);

function expectOneWinner(rs: Reply[], winner: number, loserStatus: number, loserCode: string) {
  expect(
    rs.filter((r) => r.status === winner),
    JSON.stringify(statuses(rs)),
  ).toHaveLength(1);
  for (const r of rs.filter((x) => x.status !== winner)) expectProblem(r, loserStatus, loserCode);
}

/** Teams whose owner rows break "exactly one, and it is teams.owner_id". */
async function brokenOwnerInvariant(teamIds?: string[]) {
  const { rows } = await sql<{ id: string; owners: number; owner_row_matches: boolean }>`
    select t.id,
      (select count(*) from team_members m where m.team_id = t.id and m.role = 'owner')::int as owners,
      exists (select 1 from team_members m where m.team_id = t.id and m.role = 'owner' and m.user_id = t.owner_id) as owner_row_matches
    from teams t`.execute(t.db);
  return rows.filter(
    (r) => (!teamIds || teamIds.includes(r.id)) && (r.owners !== 1 || !r.owner_row_matches),
  );
}

describe('concurrent requests', () => {
  it(`${N} parallel grant creations for one team and project: one 201, the rest 409 grant_exists`, async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const project = await newProject(t, ann);
    const roles = ['viewer', 'member', 'admin'] as const;
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        t.post(`/v2/teams/${team.id}/grants`, {
          token: ann.token,
          body: { project_id: project.id, role: roles[i % 3] },
        }),
      ),
    );
    expectOneWinner(rs, 201, 409, 'grant_exists');
    const rows = await t.db
      .selectFrom('grants')
      .selectAll()
      .where('team_id', '=', team.id)
      .where('project_id', '=', project.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(at(rows, 0).id).toBe(rs.find((r) => r.status === 201)!.json.id);
    // Only the winner left an audit record.
    const audits = await t.db
      .selectFrom('audit_events')
      .select('id')
      .where('team_id', '=', team.id)
      .where('action', '=', 'grant.created')
      .execute();
    expect(audits).toHaveLength(1);
  });

  it(`${N} parallel team creations with one slug by different users: one 201, the rest 409 slug_taken`, async () => {
    const users = await Promise.all(Array.from({ length: N }, (_, i) => newUser(t, `racer${i}`)));
    const slug = `race-${randomBytes(4).toString('hex')}`;
    const rs = await Promise.all(
      users.map((u) => t.post('/v2/teams', { token: u.token, body: { name: 'Race', slug } })),
    );
    expectOneWinner(rs, 201, 409, 'slug_taken');
    const teams = await t.db.selectFrom('teams').selectAll().where('slug', '=', slug).execute();
    expect(teams).toHaveLength(1);
    const winner = rs.find((r) => r.status === 201)!.json;
    expect(teams[0]).toMatchObject({ id: winner.id, owner_id: winner.owner_id });
    // The losers' transactions left nothing behind: no team, no membership.
    const memberships = await t.db
      .selectFrom('team_members')
      .select(['team_id', 'user_id', 'role'])
      .where(
        'user_id',
        'in',
        users.map((u) => u.id),
      )
      .execute();
    expect(memberships).toEqual([{ team_id: winner.id, user_id: winner.owner_id, role: 'owner' }]);
    expect(await brokenOwnerInvariant([winner.id])).toEqual([]);
  });

  it('parallel role changes, removals and leaves never produce zero or two owners, and owner-touching requests are refused', async () => {
    interface Setup {
      owner: TestUser;
      admins: TestUser[];
      members: TestUser[];
      teamId: string;
    }
    const setups: Setup[] = [];
    for (let k = 0; k < 3; k++) {
      const owner = await newUser(t, `owner${k}`);
      const team = await newTeam(t, owner);
      const admins = [await newUser(t, 'adm'), await newUser(t, 'adm')];
      for (const a of admins) await addMember(t, team.id, a, 'admin');
      const members: TestUser[] = [];
      for (let i = 0; i < 6; i++) {
        const m = await newUser(t, `mem${i}`);
        await addMember(t, team.id, m, at(['viewer', 'member', 'admin'] as const, i % 3));
        members.push(m);
      }
      setups.push({ owner, admins, members, teamId: team.id });
    }

    // Owner-touching requests come from the owner and from admins whose own rows are never
    // touched in this test, so "role too low" or "not found" can never be the right answer.
    type Kind = 'owner' | 'other';
    const jobs: { kind: Kind; what: string; run: () => Promise<Reply>; removes?: string }[] = [];
    for (const { owner, admins, members, teamId } of setups) {
      const base = `/v2/teams/${teamId}`;
      const callers = [owner, ...admins];
      for (const c of callers) {
        for (const role of ['admin', 'member', 'viewer'] as const) {
          jobs.push({
            kind: 'owner',
            what: `${c.name} demotes the owner to ${role}`,
            run: () => t.patch(`${base}/members/${owner.id}`, { token: c.token, body: { role } }),
          });
        }
        jobs.push({
          kind: 'owner',
          what: `${c.name} re-sets the owner to owner`,
          run: () =>
            t.patch(`${base}/members/${owner.id}`, { token: c.token, body: { role: 'owner' } }),
        });
        jobs.push({
          kind: 'owner',
          what: `${c.name} removes the owner`,
          run: () => t.del(`${base}/members/${owner.id}`, { token: c.token }),
        });
        for (const m of members) {
          jobs.push({
            kind: 'owner',
            what: `${c.name} promotes ${m.name} to owner`,
            run: () =>
              t.patch(`${base}/members/${m.id}`, { token: c.token, body: { role: 'owner' } }),
          });
        }
        for (const a of admins.filter((x) => x !== c)) {
          jobs.push({
            kind: 'owner',
            what: `${c.name} promotes admin ${a.name} to owner`,
            run: () =>
              t.patch(`${base}/members/${a.id}`, { token: c.token, body: { role: 'owner' } }),
          });
        }
      }
      jobs.push({
        kind: 'owner',
        what: 'the owner leaves',
        run: () => t.post(`${base}/leave`, { token: owner.token }),
      });
      jobs.push({
        kind: 'owner',
        what: 'the owner leaves again',
        run: () => t.post(`${base}/leave`, { token: owner.token }),
      });

      // Ordinary churn on the members at the same time.
      members.forEach((m, i) => {
        const c = at(callers, i % callers.length);
        for (const role of ['viewer', 'member', 'admin'] as const) {
          jobs.push({
            kind: 'other',
            what: `${c.name} sets ${m.name} to ${role}`,
            run: () => t.patch(`${base}/members/${m.id}`, { token: c.token, body: { role } }),
          });
        }
      });
      jobs.push({
        kind: 'other',
        what: 'remove mem0',
        removes: at(members, 0).id,
        run: () => t.del(`${base}/members/${at(members, 0).id}`, { token: at(admins, 0).token }),
      });
      jobs.push({
        kind: 'other',
        what: 'remove mem1',
        removes: at(members, 1).id,
        run: () => t.del(`${base}/members/${at(members, 1).id}`, { token: owner.token }),
      });
      jobs.push({
        kind: 'other',
        what: 'remove mem1 again',
        removes: at(members, 1).id,
        run: () => t.del(`${base}/members/${at(members, 1).id}`, { token: at(admins, 1).token }),
      });
      jobs.push({
        kind: 'other',
        what: 'mem2 leaves',
        removes: at(members, 2).id,
        run: () => t.post(`${base}/leave`, { token: at(members, 2).token }),
      });
      jobs.push({
        kind: 'other',
        what: 'mem3 leaves',
        removes: at(members, 3).id,
        run: () => t.post(`${base}/leave`, { token: at(members, 3).token }),
      });
    }
    // Interleave: a fixed shuffle so owner-touching and ordinary requests race each other.
    const order = jobs
      .map((j, i) => ({ j, k: (i * 7919) % jobs.length }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.j);
    const replies = await Promise.all(order.map((j) => j.run()));

    order.forEach((job, i) => {
      const r = at(replies, i);
      if (job.kind === 'owner') {
        const ok =
          (r.status === 403 && r.json?.code === 'owner_immutable') ||
          (r.status === 422 && r.json?.code === 'role_not_allowed');
        expect(ok, `${job.what}: ${r.status} ${r.text}`).toBe(true);
      } else {
        expect([200, 204, 404], `${job.what}: ${r.status} ${r.text}`).toContain(r.status);
        expect(r.status, `${job.what}: ${r.text}`).toBeLessThan(500);
      }
    });

    expect(await brokenOwnerInvariant(setups.map((s) => s.teamId))).toEqual([]);
    for (const s of setups) {
      const rows = await t.db
        .selectFrom('team_members')
        .select(['user_id', 'role'])
        .where('team_id', '=', s.teamId)
        .execute();
      const byUser = new Map(rows.map((r) => [r.user_id, r.role]));
      expect(byUser.get(s.owner.id)).toBe('owner');
      for (const a of s.admins) expect(byUser.get(a.id)).toBe('admin');
      for (const m of s.members.slice(0, 4)) expect(byUser.has(m.id), m.name).toBe(false);
      for (const m of s.members.slice(4, 6))
        expect(['viewer', 'member', 'admin']).toContain(byUser.get(m.id));
      const team = await t.get(`/v2/teams/${s.teamId}`, { token: s.owner.token });
      expect(team.json).toMatchObject({ owner_id: s.owner.id, role: 'owner', member_count: 5 });
    }
    // And over the whole database, not just these teams.
    expect(await brokenOwnerInvariant()).toEqual([]);
  });

  it(`${N} parallel invitations of the same address: one 201, the rest 409 invitation_exists, one e-mail`, async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const address = `guest.${randomBytes(4).toString('hex')}@example.test`;
    const spellings = [address, address.toUpperCase(), `Guest${address.slice(5)}`];
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        t.post(`/v2/teams/${team.id}/invitations`, {
          token: ann.token,
          body: { email: spellings[i % spellings.length], role: 'member' },
        }),
      ),
    );
    expectOneWinner(rs, 201, 409, 'invitation_exists');
    const rows = await t.db
      .selectFrom('invitations')
      .selectAll()
      .where('team_id', '=', team.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ email: address, closed_at: null });
    const mails = await t.db
      .selectFrom('emails')
      .select('id')
      .where('to_address', '=', address)
      .execute();
    expect(mails).toHaveLength(1);
    // One delivery job, keyed by the e-mail; the losers' rolled-back jobs left nothing behind.
    const jobs = await sql<{
      key: string | null;
    }>`select key from graphile_worker.jobs where task_identifier = 'send_email'`.execute(t.db);
    expect(jobs.rows.filter((j) => j.key === at(mails, 0).id)).toHaveLength(1);
    const known = new Set(
      (await t.db.selectFrom('emails').select('id').execute()).map((e) => e.id),
    );
    expect(jobs.rows.filter((j) => !j.key || !known.has(j.key))).toEqual([]);
  });
});

describe('the database keeps the invariants when a service check is bypassed', () => {
  async function world() {
    const owner = await newUser(t, 'owner');
    const other = await newUser(t, 'other');
    const outsider = await newUser(t, 'outsider');
    const team = await newTeam(t, owner);
    await addMember(t, team.id, other, 'admin');
    const project = await newProject(t, owner);
    return { owner, other, outsider, team, project };
  }

  async function refused(statement: Promise<unknown>) {
    const err = await statement.then(
      () => undefined,
      (e: { code?: string; hint?: string; message: string }) => e,
    );
    expect(err, 'the statement should have been refused').toBeDefined();
    return err!;
  }

  it("updating the owner's role fails", async () => {
    const { owner, outsider, team } = await world();
    for (const role of ['admin', 'member', 'viewer']) {
      const err = await refused(
        sql`update team_members set role = ${role}::team_role where team_id = ${team.id} and user_id = ${owner.id}`.execute(
          t.db,
        ),
      );
      expect(err).toMatchObject({ code: 'P0001', hint: 'owner_immutable' });
    }
    // Moving the owner row to somebody else is refused too.
    const err = await refused(
      sql`update team_members set user_id = ${outsider.id} where team_id = ${team.id} and user_id = ${owner.id}`.execute(
        t.db,
      ),
    );
    expect(err).toMatchObject({ code: 'P0001', hint: 'owner_immutable' });
    expect(await brokenOwnerInvariant([team.id])).toEqual([]);
  });

  it("deleting the owner's membership fails (but deleting the team takes it along)", async () => {
    const { owner, team } = await world();
    const err = await refused(
      sql`delete from team_members where team_id = ${team.id} and user_id = ${owner.id}`.execute(
        t.db,
      ),
    );
    expect(err).toMatchObject({ code: 'P0001', hint: 'owner_immutable' });
    const all = await refused(
      sql`delete from team_members where team_id = ${team.id}`.execute(t.db),
    );
    expect(all.code).toBe('P0001');
    expect(await brokenOwnerInvariant([team.id])).toEqual([]);

    await sql`delete from teams where id = ${team.id}`.execute(t.db);
    const left = await t.db
      .selectFrom('team_members')
      .select('user_id')
      .where('team_id', '=', team.id)
      .execute();
    expect(left).toEqual([]);
  });

  it('a second owner fails, by insert or by promotion', async () => {
    const { other, outsider, team } = await world();
    const ins = await refused(
      sql`insert into team_members (team_id, user_id, role, joined_at) values (${team.id}, ${outsider.id}, 'owner', now())`.execute(
        t.db,
      ),
    );
    expect(ins.code).toMatch(/^(P0001|23505)$/);
    const upd = await refused(
      sql`update team_members set role = 'owner' where team_id = ${team.id} and user_id = ${other.id}`.execute(
        t.db,
      ),
    );
    expect(upd.code).toMatch(/^(P0001|23505)$/);
    expect(await brokenOwnerInvariant([team.id])).toEqual([]);
  });

  it('a grant with role owner fails, by insert or by update', async () => {
    const { team, project } = await world();
    const ins = await refused(
      sql`insert into grants (id, team_id, project_id, role, created_at) values (${`grt_raw${randomBytes(6).toString('hex')}`}, ${team.id}, ${project.id}, 'owner', now())`.execute(
        t.db,
      ),
    );
    expect(ins.code).toBe('23514'); // check_violation
    const id = `grt_raw${randomBytes(6).toString('hex')}`;
    await sql`insert into grants (id, team_id, project_id, role, created_at) values (${id}, ${team.id}, ${project.id}, 'admin', now())`.execute(
      t.db,
    );
    const upd = await refused(sql`update grants set role = 'owner' where id = ${id}`.execute(t.db));
    expect(upd.code).toBe('23514');
  });

  it('an invitation with role owner fails', async () => {
    const { team } = await world();
    const err = await refused(
      sql`insert into invitations (id, team_id, email, role, token_hash, created_at, expires_at)
      values (${`inv_raw${randomBytes(6).toString('hex')}`}, ${team.id}, 'x@example.test', 'owner', ${randomBytes(32)}, now(), now() + interval '1 day')`.execute(
        t.db,
      ),
    );
    expect(err.code).toBe('23514');
  });

  it('a team without an owner row cannot be committed', async () => {
    const { owner } = await world();
    const id = `team_raw${randomBytes(6).toString('hex')}`;
    const err = await refused(
      sql`insert into teams (id, name, slug, owner_id, created_at) values (${id}, 'Raw', ${`raw-${randomBytes(4).toString('hex')}`}, ${owner.id}, now())`.execute(
        t.db,
      ),
    );
    expect(err).toMatchObject({ code: 'P0001', hint: 'owner_immutable' });
    expect(await t.db.selectFrom('teams').select('id').where('id', '=', id).execute()).toEqual([]);
  });

  it('teams.owner_id cannot be pointed at somebody other than the owner row', async () => {
    // The invariant "the owner row is teams.owner_id" must hold for any write, not only the
    // ones the services make: moving teams.owner_id to another member must be refused.
    const { other, team } = await world();
    const err = await refused(
      sql`update teams set owner_id = ${other.id} where id = ${team.id}`.execute(t.db),
    );
    expect(err.code).toBe('P0001');
    expect(await brokenOwnerInvariant([team.id])).toEqual([]);
  });
});
