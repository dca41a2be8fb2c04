// Ownership transfers' statements (CONTRACT 7): the team or org row, its members' roles, and a
// project's owner. The guards of migrations 0001 and 0015 refuse every change of an owner unless
// the transaction says it is a transfer (markOwnerTransfer).
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/** Lets this transaction (only) move an owner past the owner guards (migrations/0015). */
export async function markOwnerTransfer(q: Queryable) {
  await sql`select set_config('frameplane.owner_transfer', 'on', true)`.execute(q);
}

/** The team (or org) row, locked FOR UPDATE: two transfers of one team run one after the other. */
export function lockTeamOfKind(q: Queryable, teamId: string, kind: 'team' | 'org') {
  return q
    .selectFrom('teams')
    .select(['id', 'owner_id'])
    .where('id', '=', teamId)
    .where('kind', '=', kind)
    .forUpdate()
    .executeTakeFirst();
}

export function lockMember(q: Queryable, teamId: string, userId: string) {
  return q
    .selectFrom('team_members')
    .select('role')
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

/** Swaps the owner: the old one becomes admin, the member becomes owner and teams.owner_id. */
export async function moveTeamOwner(
  q: Queryable,
  teamId: string,
  from: string,
  to: string,
): Promise<void> {
  // Demote first: at no point are there two owner rows.
  await q
    .updateTable('team_members')
    .set({ role: 'admin' })
    .where('team_id', '=', teamId)
    .where('user_id', '=', from)
    .execute();
  await q
    .updateTable('team_members')
    .set({ role: 'owner' })
    .where('team_id', '=', teamId)
    .where('user_id', '=', to)
    .execute();
  await q.updateTable('teams').set({ owner_id: to }).where('id', '=', teamId).execute();
}

/** Who owns the project now, unlocked: tells the transfer which payers to lock first. */
export function projectOwner(q: Queryable, projectId: string) {
  return q
    .selectFrom('projects')
    .select(['owner_id', 'org_id'])
    .where('id', '=', projectId)
    .executeTakeFirst();
}

export function lockProjectOwner(q: Queryable, projectId: string) {
  return q
    .selectFrom('projects')
    .select(['owner_id', 'org_id'])
    .where('id', '=', projectId)
    .forUpdate()
    .executeTakeFirst();
}

/** Gives the project to a user or to an org; its trigger moves the project's access version. */
export async function setProjectOwner(
  q: Queryable,
  projectId: string,
  owner: { owner_id: string | null; org_id: string | null },
) {
  await q.updateTable('projects').set(owner).where('id', '=', projectId).execute();
}
