// The SQL half of access: each query returns the row together with the caller's role in one
// round trip. Role order is the order of the team_role enum, so least()/max() do the work.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';

/**
 * SQL for the caller's effective role on the project `projectRef` (a column reference).
 *
 * The join is driven from the caller's memberships, one probe of the (team_id, project_id) key
 * per team they are in, whatever the project: statements are prepared (src/db/prepared.ts) and
 * run with a generic plan, so the shape must be right for every project. Driven from the
 * project's grants instead, a project shared with 1,800 teams cost 1,800 probes. The LIMIT
 * keeps PostgreSQL from flattening the lateral subquery and choosing that order itself.
 */
export function projectRoleSql(projectRef: string, userId: string) {
  const owner = sql.ref(`${projectRef}.owner_id`);
  return sql<Role | null>`case when ${owner} = ${userId} then 'owner'::team_role else (
    select max(least(m.role, g.role)) from team_members m
    cross join lateral (select role from grants where team_id = m.team_id and project_id = ${sql.ref(`${projectRef}.id`)} limit 1) g
    where m.user_id = ${userId}) end`;
}

/** True when the user reaches the project at all (owns it, or a team of theirs holds a grant). */
export function reachesProjectSql(projectRef: string, userId: string): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref(`${projectRef}.owner_id`)} = ${userId} or exists (
    select 1 from team_members m join grants g on g.team_id = m.team_id and g.project_id = ${sql.ref(`${projectRef}.id`)}
    where m.user_id = ${userId}))`;
}

export function projectWithRole(q: Queryable, projectId: string, userId: string, lock = false) {
  let query = q.selectFrom('projects as p').selectAll('p').select(projectRoleSql('p', userId).as('role'))
    .where('p.id', '=', projectId);
  if (lock) query = query.forUpdate('p' as never);
  return query.executeTakeFirst();
}

export function teamWithRole(q: Queryable, teamId: string, userId: string) {
  return q.selectFrom('teams as t')
    .innerJoin('team_members as m', (j) => j.onRef('m.team_id', '=', 't.id').on('m.user_id', '=', userId))
    .selectAll('t').select('m.role')
    .where('t.id', '=', teamId)
    .executeTakeFirst();
}
