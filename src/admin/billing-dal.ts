// Billing's statements: the user's billing status and the frames of the projects they own.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/** The user, locked FOR NO KEY UPDATE: rows that merely reference it (audit, tokens) stay insertable. */
export function lockUserBilling(q: Queryable, userId: string) {
  return q
    .selectFrom('users')
    .select(['id', 'billing_status'])
    .where('id', '=', userId)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

/** Locks the frames of the user's projects in id order, as the agent sync locks them. */
export async function lockOwnedFrames(q: Queryable, userId: string) {
  await q
    .selectFrom('frames')
    .select('id')
    .where('project_id', 'in', (eb) =>
      eb.selectFrom('projects').select('id').where('owner_id', '=', userId),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Moves the generation of every frame of the user's projects, so their agents re-read them. */
export function bumpOwnedFrames(q: Queryable, userId: string, now: Date) {
  return q
    .updateTable('frames')
    .set({ generation: sql`generation + 1`, updated_at: now })
    .where('project_id', 'in', (eb) =>
      eb.selectFrom('projects').select('id').where('owner_id', '=', userId),
    )
    .returning(['id', 'agent_id'])
    .execute();
}

export async function setBillingStatus(
  q: Queryable,
  userId: string,
  status: 'active' | 'past_due',
) {
  await q.updateTable('users').set({ billing_status: status }).where('id', '=', userId).execute();
}
