// The SQL half of access: each query returns the row together with the caller's role in one
// round trip. Role order is the order of the team_role enum, so least()/max() do the work.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';

/**
 * SQL for the caller's effective role on the project `projectRef` (a column reference). Given the
 * project id as a value too, the grants subquery is planned for that project (a widely shared
 * project then costs an index lookup, not a hash over all its grants).
 */
export function projectRoleSql(projectRef: string, userId: string, projectId?: string) {
  const id = projectId ?? sql.ref(`${projectRef}.id`);
  const owner = sql.ref(`${projectRef}.owner_id`);
  return sql<Role | null>`case when ${owner} = ${userId} then 'owner'::team_role else (
    select max(least(m.role, g.role)) from grants g
    join team_members m on m.team_id = g.team_id and m.user_id = ${userId}
    where g.project_id = ${id}) end`;
}

/** True when the user reaches the project at all (owns it, or a team of theirs holds a grant). */
export function reachesProjectSql(projectRef: string, userId: string): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref(`${projectRef}.owner_id`)} = ${userId} or exists (
    select 1 from grants g join team_members m on m.team_id = g.team_id and m.user_id = ${userId}
    where g.project_id = ${sql.ref(`${projectRef}.id`)}))`;
}

export function projectWithRole(q: Queryable, projectId: string, userId: string, lock = false) {
  let query = q.selectFrom('projects as p').selectAll('p').select(projectRoleSql('p', userId, projectId).as('role'))
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
