// The SQL half of access: each query returns the row together with the caller's role in one
// round trip. Role order is the order of the team_role enum, so least()/max() do the work.
import { sql, type Kysely } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { compiledOnce } from '../db/compiled.ts';
import type { DB, Role } from '../db/schema.ts';
import type { RoleSeen } from './role-memo.ts';

/** The two versions a remembered role holds at: the project `p`'s and the caller `cu`'s. */
export const ACCESS_VERSIONS = [
  'cu.access_version as caller_access_version',
  'p.access_version as project_access_version',
] as const;

/**
 * SQL for the caller's effective role on the project `projectRef` (a column reference): owner
 * for its user owner, else the highest of the org path and the team paths (roles.ts,
 * effectiveProjectRole); greatest() skips a path that gives nothing (null).
 *
 * Statements are prepared (src/db/connections.ts) and run with a generic plan, so the shape must
 * suit every caller and project: a user in one team or in forty, a project shared with no team
 * or with 1,800. The org path is one probe of the (team_id, user_id) key, none for a user's
 * project (org_id is null). For the team paths the caller's team ids come first, from one
 * index-only range scan; the project's grants for those teams are then one scan of the
 * (project_id, team_id) index with `= ANY` (on PostgreSQL 17+ a single pass over that range),
 * and only the matching teams are joined back for the team role. Driven from the project's
 * grants, a widely shared project cost 1,800 probes; driven from the caller's teams, one probe
 * per team. (An org's id is among the caller's team ids too, but no grant names an org: 0015.)
 */
export function projectRoleSql(projectRef: string, userId: string) {
  const owner = sql.ref(`${projectRef}.owner_id`);
  return sql<Role | null>`case when ${owner} = ${userId} then 'owner'::team_role else greatest(
    ${orgPathRoleSql(projectRef, userId)},
    (select max(least(m.role, g.role)) from grants g
    join team_members m on m.team_id = g.team_id and m.user_id = ${userId}
    where g.project_id = ${sql.ref(`${projectRef}.id`)}
      and g.team_id = any(array(select team_id from team_members where user_id = ${userId})))) end`;
}

/** The org path alone (roles.ts, orgProjectRole): null for a user's project or an outsider. */
function orgPathRoleSql(projectRef: string, userId: string) {
  return sql<Role | null>`(select case when om.role = 'member'
      then nullif(o.base_role, 'none')::team_role else om.role end
    from team_members om join teams o on o.id = om.team_id
    where om.team_id = ${sql.ref(`${projectRef}.org_id`)} and om.user_id = ${userId})`;
}

/**
 * SQL for the ids of every project the user reaches: owned, owned by an org of theirs (unless
 * it gives a plain member nothing: base_role 'none'), or shared with a team of theirs.
 * Listing starts from these (a few index ranges) rather than testing every project in turn.
 * The org branch starts from the caller's memberships; projects.org_id names an org only (0015),
 * so a filter on teams.kind is not needed, and with one the planner may scan every org instead.
 */
export function reachableProjectIdsSql(userId: string) {
  return sql<string>`(select id from projects where owner_id = ${userId}
    union select op.id from team_members om join projects op on op.org_id = om.team_id
      join teams o on o.id = om.team_id
      where om.user_id = ${userId} and (om.role <> 'member' or o.base_role <> 'none')
    union select g.project_id from team_members m join grants g on g.team_id = m.team_id where m.user_id = ${userId})`;
}

/** The project, with the caller's user row as `cu` (for ACCESS_VERSIONS). */
const projectOf = (q: Kysely<DB>, projectId: string, userId: string) =>
  q
    .selectFrom('projects as p')
    .innerJoin('users as cu', (j) => j.on('cu.id', '=', userId))
    .selectAll('p')
    .where('p.id', '=', projectId);

const projectRead = compiledOnce((q, projectId: string, userId: string) =>
  projectOf(q, projectId, userId).select([
    projectRoleSql('p', userId).as('role'),
    ...ACCESS_VERSIONS,
  ]),
);
const projectVersions = compiledOnce((q, projectId: string, userId: string) =>
  projectOf(q, projectId, userId).select(ACCESS_VERSIONS),
);

/**
 * The project and the caller's role with the versions it holds at (role-memo.ts); with
 * `remembered`, the role is left out and only the versions are read, for withRole to compare.
 */
export async function projectWithRole(
  q: Queryable,
  projectId: string,
  userId: string,
  remembered?: boolean,
) {
  const rows = await (remembered ? projectVersions : projectRead)(q, projectId, userId);
  return rows[0] as (Awaited<ReturnType<typeof projectRead>>[number] & RoleSeen) | undefined;
}

// An organization is a teams row of kind 'org' (migrations/0015): the kind is part of the read,
// so a team route never serves an org and an org route never serves a team.
const teamRead = compiledOnce((q, teamId: string, userId: string, kind: 'team' | 'org') =>
  q
    .selectFrom('teams as t')
    .innerJoin('team_members as m', (j) =>
      j.onRef('m.team_id', '=', 't.id').on('m.user_id', '=', userId),
    )
    .selectAll('t')
    .select('m.role')
    .where('t.id', '=', teamId)
    .where('t.kind', '=', kind),
);

export async function teamWithRole(q: Queryable, teamId: string, userId: string) {
  return (await teamRead(q, teamId, userId, 'team'))[0];
}

/** The org and the caller's org role (owner, admin or member), if the caller is a member. */
export async function orgWithRole(q: Queryable, orgId: string, userId: string) {
  return (await teamRead(q, orgId, userId, 'org'))[0];
}

/**
 * The user's role in the organization `orgId` (not a team: kind 'org'), or undefined when they
 * are not a member. Locked FOR SHARE inside a transaction (`lock`), so that a project created
 * for the org commits only under the role that allowed it.
 */
export async function orgRoleOf(q: Queryable, orgId: string, userId: string, lock = false) {
  let query = q
    .selectFrom('team_members as m')
    .innerJoin('teams as o', 'o.id', 'm.team_id')
    .select('m.role')
    .where('m.team_id', '=', orgId)
    .where('m.user_id', '=', userId)
    .where('o.kind', '=', 'org');
  if (lock) query = query.forShare('m');
  return (await query.executeTakeFirst())?.role;
}
