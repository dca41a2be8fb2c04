// Projects and their spaces; projects-service.ts owns the transactions and the access checks.
import { type Insertable, sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { projectRoleSql, reachableProjectIdsSql } from '../access/access-dal.ts';

/** Owned and shared projects with the caller's effective role, in one query. */
export function listProjectsFor(q: Queryable, userId: string, limit: number, afterId?: string) {
  let query = q
    .selectFrom('projects as p')
    .selectAll('p')
    .select(projectRoleSql('p', userId).as('role'))
    .where('p.id', 'in', reachableProjectIdsSql(userId));
  if (afterId) query = query.where('p.id', '>', afterId);
  return query
    .orderBy('p.id')
    .limit(limit + 1)
    .execute();
}

export function listSpaces(q: Queryable, projectId: string, limit: number, afterId?: string) {
  let query = q.selectFrom('spaces').selectAll().where('project_id', '=', projectId);
  if (afterId) query = query.where('id', '>', afterId);
  return query
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export function spaceById(q: Queryable, projectId: string, spaceId: string) {
  return q
    .selectFrom('spaces')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('id', '=', spaceId)
    .executeTakeFirst();
}

/** Who reaches a project through teams: every member of every team holding a grant. */
export function projectTeamAccess(q: Queryable, projectId: string) {
  return q
    .selectFrom('grants as g')
    .innerJoin('teams as t', 't.id', 'g.team_id')
    .innerJoin('team_members as m', 'm.team_id', 'g.team_id')
    .select([
      'g.id as grant_id',
      'g.role as grant_role',
      'g.created_at as granted_at',
      't.id as team_id',
      't.name as team_name',
      't.slug as team_slug',
      'm.user_id',
      'm.email',
      'm.name',
      'm.role as team_role',
    ])
    .where('g.project_id', '=', projectId)
    .orderBy('g.id')
    .orderBy('m.joined_at')
    .orderBy('m.user_id')
    .execute();
}

export function insertProject(q: Queryable, project: Insertable<DB['projects']>) {
  return q.insertInto('projects').values(project).returningAll().executeTakeFirstOrThrow();
}

export function renameProject(q: Queryable, projectId: string, name: string) {
  return q
    .updateTable('projects')
    .set({ name })
    .where('id', '=', projectId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Wakes, once the transaction commits, the agents that run the project's frames and the live
 * streams of those frames, so that a deleted project's frames stop at once, as a deleted
 * frame's do. Run before the delete: the frames go with the project.
 */
export async function notifyFramesGone(q: Queryable, projectId: string) {
  await sql`select pg_notify('frameplane_agent', a.agent_id) from (select distinct agent_id
    from frames where project_id = ${projectId} and agent_id is not null) a`.execute(q);
  await sql`select pg_notify('frameplane_frame_events', id) from frames
    where project_id = ${projectId}`.execute(q);
}

export function deleteProject(q: Queryable, projectId: string) {
  return q.deleteFrom('projects').where('id', '=', projectId).execute();
}

/** The organization that owns a project, with its owner as the access list shows them. */
export function orgWithOwner(q: Queryable, orgId: string) {
  return q
    .selectFrom('teams as o')
    .innerJoin('users as u', 'u.id', 'o.owner_id')
    .select([
      'o.id',
      'o.name',
      'o.slug',
      'o.base_role',
      'u.id as owner_id',
      'u.email as owner_email',
      'u.name as owner_name',
    ])
    .where('o.id', '=', orgId)
    .where('o.kind', '=', 'org')
    .executeTakeFirstOrThrow();
}

/** Every member of the org, in join order (the owner first): who may reach its projects. */
export function orgMembersForAccess(q: Queryable, orgId: string) {
  return q
    .selectFrom('team_members as m')
    .select(['m.user_id', 'm.email', 'm.name', 'm.role as org_role'])
    .where('m.team_id', '=', orgId)
    .orderBy('m.joined_at')
    .orderBy('m.user_id')
    .execute();
}

/** The project owner as the access list shows them. */
export function ownerContact(q: Queryable, ownerId: string) {
  return q
    .selectFrom('users')
    .select(['id', 'email', 'name'])
    .where('id', '=', ownerId)
    .executeTakeFirstOrThrow();
}

export function insertSpace(q: Queryable, space: Insertable<DB['spaces']>) {
  return q.insertInto('spaces').values(space).returningAll().executeTakeFirstOrThrow();
}

export function renameSpace(q: Queryable, projectId: string, spaceId: string, name: string) {
  return q
    .updateTable('spaces')
    .set({ name })
    .where('project_id', '=', projectId)
    .where('id', '=', spaceId)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the space; false when the project has no such space. */
export async function deleteSpace(q: Queryable, projectId: string, spaceId: string) {
  const res = await q
    .deleteFrom('spaces')
    .where('project_id', '=', projectId)
    .where('id', '=', spaceId)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}
