// Grants: every statement of grants-service.
import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';

export function grantById(q: Queryable, teamId: string, grantId: string) {
  return q
    .selectFrom('grants')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', grantId)
    .executeTakeFirst();
}

/** The same row, locked until the transaction ends: changes of one grant queue up. */
export function grantForUpdate(q: Queryable, teamId: string, grantId: string) {
  return q
    .selectFrom('grants')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', grantId)
    .forUpdate()
    .executeTakeFirst();
}

/** A team's grants, for paging by id (db/paging.ts). */
export function grantsOfTeam(q: Queryable, teamId: string) {
  return q.selectFrom('grants').selectAll().where('team_id', '=', teamId);
}

export interface NewGrant {
  id: string;
  team_id: string;
  project_id: string;
  role: Role;
  created_by: string;
  created_at: Date;
}

export function insertGrant(q: Queryable, values: NewGrant) {
  return q.insertInto('grants').values(values).returningAll().executeTakeFirstOrThrow();
}

export function setGrantRole(q: Queryable, teamId: string, grantId: string, role: Role) {
  return q
    .updateTable('grants')
    .set({ role })
    .where('id', '=', grantId)
    .where('team_id', '=', teamId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the grant; false if there was none. */
export async function deleteGrant(q: Queryable, teamId: string, grantId: string) {
  const res = await q
    .deleteFrom('grants')
    .where('id', '=', grantId)
    .where('team_id', '=', teamId)
    .executeTakeFirst();
  return res.numDeletedRows > 0n;
}
