// Billing's statements: the billing status of whoever pays (a user, or an organization for the
// projects it owns, CONTRACT 3a) and the frames of the projects they pay for.
import { type ExpressionBuilder, sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB } from '../db/schema.ts';

export type BillingStatus = 'active' | 'past_due';

/** Who pays for a project: the user who owns it (owner_id) or the organization that does (org_id). */
export type Payer = { kind: 'user'; id: string } | { kind: 'org'; id: string };

/** The frames a billing change moves: those of every project of a payer, or of one project. */
export type FrameScope = Payer | { kind: 'project'; id: string };

const projectColumn = { user: 'owner_id', org: 'org_id', project: 'id' } as const;

const projectsIn = (eb: ExpressionBuilder<DB, 'frames'>, scope: FrameScope) =>
  eb.selectFrom('projects').select('id').where(projectColumn[scope.kind], '=', scope.id);

/**
 * The payer's row with its billing status, locked: FOR NO KEY UPDATE to change the status (rows
 * that merely reference it, such as audit rows and tokens, stay insertable), FOR SHARE to read a
 * status that must not change before commit (an ownership transfer). Null when there is no such
 * user, or no such organization (a team is not one).
 */
export async function lockPayer(
  q: Queryable,
  payer: Payer,
  mode: 'change' | 'read',
): Promise<{ billing_status: BillingStatus } | undefined> {
  if (payer.kind === 'user') {
    const query = q.selectFrom('users').select('billing_status').where('id', '=', payer.id);
    return (mode === 'change' ? query.forNoKeyUpdate() : query.forShare()).executeTakeFirst();
  }
  const query = q
    .selectFrom('teams')
    .select(sql<BillingStatus>`billing_status`.as('billing_status'))
    .where('id', '=', payer.id)
    .where('kind', '=', 'org');
  return (mode === 'change' ? query.forNoKeyUpdate() : query.forShare()).executeTakeFirst();
}

/**
 * Locks the projects a payer pays for, in id order: a change of its status rewrites their copy
 * of it (projects.payer_billing, migrations/0021), and a transfer or a deletion holds a project
 * before its frames, and a transfer before its users (transfers-service.ts).
 */
export async function lockProjectsOf(q: Queryable, payer: Payer) {
  await q
    .selectFrom('projects')
    .select('id')
    .where(projectColumn[payer.kind], '=', payer.id)
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

/** Locks the frames in scope in id order, as the agent sync locks them. */
export async function lockFramesIn(q: Queryable, scope: FrameScope) {
  await q
    .selectFrom('frames')
    .select('id')
    .where('project_id', 'in', (eb) => projectsIn(eb, scope))
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Moves the generation of every frame in scope, so their agents re-read them. */
export function bumpFramesIn(q: Queryable, scope: FrameScope, now: Date) {
  return q
    .updateTable('frames')
    .set({ generation: sql`generation + 1`, updated_at: now })
    .where('project_id', 'in', (eb) => projectsIn(eb, scope))
    .returning(['id', 'agent_id'])
    .execute();
}

export async function setBillingStatus(q: Queryable, payer: Payer, status: BillingStatus) {
  if (payer.kind === 'user')
    await q
      .updateTable('users')
      .set({ billing_status: status })
      .where('id', '=', payer.id)
      .execute();
  else
    await q
      .updateTable('teams')
      .set({ billing_status: status })
      .where('id', '=', payer.id)
      .where('kind', '=', 'org')
      .execute();
}
