import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { compiledOnce } from '../db/compiled.ts';
import type { Role } from '../db/schema.ts';

// Teams and organizations are both teams rows (migrations/0015); a list is of one kind.
const teamsOf = (q: Queryable, userId: string, kind: 'team' | 'org') =>
  q
    .selectFrom('team_members as m')
    .innerJoin('teams as t', 't.id', 'm.team_id')
    .selectAll('t')
    .select('m.role')
    .where('m.user_id', '=', userId)
    .where('t.kind', '=', kind);
const firstTeams = compiledOnce((q, userId: string, kind: 'team' | 'org', limit: number) =>
  teamsOf(q, userId, kind).orderBy('t.id').limit(limit),
);
const nextTeams = compiledOnce(
  (q, userId: string, kind: 'team' | 'org', limit: number, afterId: string) =>
    teamsOf(q, userId, kind).where('t.id', '>', afterId).orderBy('t.id').limit(limit),
);

/** Every team (or org) the user is in, with their role and the member count, in one query. */
export function listTeamsFor(
  q: Queryable,
  userId: string,
  limit: number,
  afterId?: string,
  kind: 'team' | 'org' = 'team',
) {
  return afterId
    ? nextTeams(q, userId, kind, limit + 1, afterId)
    : firstTeams(q, userId, kind, limit + 1);
}

const membersOf = (q: Queryable, teamId: string) =>
  q
    .selectFrom('team_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.email', 'u.name', 'm.role', 'm.joined_at'])
    .where('m.team_id', '=', teamId);
const firstMembers = compiledOnce((q, teamId: string, limit: number) =>
  membersOf(q, teamId).orderBy('m.joined_at').orderBy('m.user_id').limit(limit),
);
// A row comparison: the index (team_id, joined_at, user_id) serves it as one range scan.
const nextMembers = compiledOnce((q, teamId: string, limit: number, at: string, userId: string) =>
  membersOf(q, teamId)
    .where(sql`(m.joined_at, m.user_id)`, '>', sql`(${at}::timestamptz, ${userId}::text)`)
    .orderBy('m.joined_at')
    .orderBy('m.user_id')
    .limit(limit),
);

/** A page of a team's members in join order; `after` is the last row's (joined_at, user_id). */
export function listMembers(q: Queryable, teamId: string, limit: number, after?: [string, string]) {
  return after
    ? nextMembers(q, teamId, limit + 1, new Date(after[0]).toISOString(), after[1])
    : firstMembers(q, teamId, limit + 1);
}

export function member(q: Queryable, teamId: string, userId: string) {
  return q
    .selectFrom('team_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.team_id', 'm.user_id', 'u.email', 'u.name', 'm.role', 'm.joined_at'])
    .where('m.team_id', '=', teamId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}

export function insertTeam(
  q: Queryable,
  t: { id: string; name: string; slug: string; ownerId: string; now: Date },
) {
  return q
    .insertInto('teams')
    .values({ id: t.id, name: t.name, slug: t.slug, owner_id: t.ownerId, created_at: t.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateTeam(q: Queryable, teamId: string, input: { name?: string; slug?: string }) {
  return q
    .updateTable('teams')
    .set(input)
    .where('id', '=', teamId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the team; its memberships, invitations and grants go with it (ON DELETE CASCADE). */
export async function deleteTeam(q: Queryable, teamId: string) {
  await q.deleteFrom('teams').where('id', '=', teamId).execute();
}

export async function insertMember(
  q: Queryable,
  m: { teamId: string; userId: string; role: Role; now: Date },
) {
  await q
    .insertInto('team_members')
    .values({ team_id: m.teamId, user_id: m.userId, role: m.role, joined_at: m.now })
    .execute();
}

/**
 * Locks the team's row before a member row changes. The member triggers write the team row
 * after the member row (counts, list version); the operator's transfer locks the team row and
 * then the member rows. Taking the team row first here gives both one order: they wait for
 * each other instead of deadlocking.
 */
async function lockTeamRow(q: Queryable, teamId: string) {
  await q.selectFrom('teams').select('id').where('id', '=', teamId).forNoKeyUpdate().execute();
}

/** The member's new role, or undefined if they are not a member. */
export async function setMemberRole(q: Queryable, teamId: string, userId: string, role: Role) {
  await lockTeamRow(q, teamId);
  const row = await q
    .updateTable('team_members')
    .set({ role })
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .returning('role')
    .executeTakeFirst();
  return row?.role;
}

/** Removes the membership; false if there was none. */
export async function deleteMember(q: Queryable, teamId: string, userId: string) {
  await lockTeamRow(q, teamId);
  const res = await q
    .deleteFrom('team_members')
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}
