import { sql, type Kysely } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { compiledOnce } from '../db/compiled.ts';
import type { DB, Role } from '../db/schema.ts';

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

/** What a member list shows of each member: the membership with its copy of the user's name
 *  and e-mail (migrations/0019), all in team_members_joined. */
const MEMBER_SHOWN = ['m.user_id', 'm.email', 'm.name', 'm.role', 'm.joined_at'] as const;

const membersOf = (q: Queryable, teamId: string) =>
  q.selectFrom('team_members as m').select(MEMBER_SHOWN).where('m.team_id', '=', teamId);
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

// The caller's role and the team's members_version with a page of its members, in one
// statement: 0 rows when the caller is not in a team of that kind; one row of nulls after the
// caller's columns when the page is empty. The page is a lateral subquery on the same index
// range as listMembers': team_members_joined holds what a page shows (migrations/0019), so it
// is read from the index alone.
const pageWithCaller = (
  q: Kysely<DB>,
  teamId: string,
  kind: 'team' | 'org',
  userId: string,
  limit: number,
  after?: [string, string],
) =>
  q
    .selectFrom('teams as t')
    .innerJoin('team_members as c', (j) =>
      j.onRef('c.team_id', '=', 't.id').on('c.user_id', '=', userId),
    )
    .leftJoinLateral(
      (eb) => {
        let page = eb
          .selectFrom('team_members as m')
          .select(MEMBER_SHOWN)
          .whereRef('m.team_id', '=', 't.id');
        if (after)
          page = page.where(
            sql`(m.joined_at, m.user_id)`,
            '>',
            sql`(${after[0]}::timestamptz, ${after[1]}::text)`,
          );
        return page.orderBy('m.joined_at').orderBy('m.user_id').limit(limit).as('p');
      },
      (j) => j.onTrue(),
    )
    .select(['c.role as caller_role', 't.members_version', 't.member_count'])
    .select(['p.user_id', 'p.email', 'p.name', 'p.role', 'p.joined_at'])
    .where('t.id', '=', teamId)
    .where('t.kind', '=', kind)
    .orderBy('p.joined_at')
    .orderBy('p.user_id');
const firstPageWithCaller = compiledOnce(
  (q, teamId: string, kind: 'team' | 'org', userId: string, limit: number) =>
    pageWithCaller(q, teamId, kind, userId, limit),
);
const nextPageWithCaller = compiledOnce(
  (
    q,
    teamId: string,
    kind: 'team' | 'org',
    userId: string,
    limit: number,
    at: string,
    id: string,
  ) => pageWithCaller(q, teamId, kind, userId, limit, [at, id]),
);

/** listMembers with the caller's role and the list's version (pageWithCaller), in one query. */
export function membersWithCaller(
  q: Queryable,
  teamId: string,
  kind: 'team' | 'org',
  userId: string,
  limit: number,
  after?: [string, string],
) {
  return after
    ? nextPageWithCaller(
        q,
        teamId,
        kind,
        userId,
        limit + 1,
        new Date(after[0]).toISOString(),
        after[1],
      )
    : firstPageWithCaller(q, teamId, kind, userId, limit + 1);
}

// A whole member list with its members_version, in one statement (one snapshot), for the
// rosters of member-rosters.ts: one row of nulls after the version when the team has none.
const rosterOf = compiledOnce((q, teamId: string, kind: 'team' | 'org', max: number) =>
  q
    .selectFrom('teams as t')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('team_members as m')
          .select(MEMBER_SHOWN)
          .whereRef('m.team_id', '=', 't.id')
          .orderBy('m.joined_at')
          .orderBy('m.user_id')
          .limit(max)
          .as('p'),
      (j) => j.onTrue(),
    )
    .select(['t.members_version', 'p.user_id', 'p.email', 'p.name', 'p.role', 'p.joined_at'])
    .where('t.id', '=', teamId)
    .where('t.kind', '=', kind)
    .orderBy('p.joined_at')
    .orderBy('p.user_id'),
);

/** At most `max` members of a team in list order, with the version they are of. */
export const memberRoster = (q: Queryable, teamId: string, kind: 'team' | 'org', max: number) =>
  rosterOf(q, teamId, kind, max);

export function member(q: Queryable, teamId: string, userId: string) {
  return q
    .selectFrom('team_members as m')
    .select(['m.team_id', ...MEMBER_SHOWN])
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
