// Organizations: the statements of orgs-service that are not a team's too. An org is a teams row
// of kind 'org' (migrations/0015); its memberships and its deletion are those of teams-dal.ts.
import type { Queryable } from '../db/database.ts';
import type { BaseRole } from '../db/schema.ts';

export function insertOrg(
  q: Queryable,
  o: { id: string; name: string; slug: string; ownerId: string; now: Date },
) {
  return q
    .insertInto('teams')
    .values({
      id: o.id,
      name: o.name,
      slug: o.slug,
      owner_id: o.ownerId,
      kind: 'org',
      base_role: 'viewer',
      billing_status: 'active',
      created_at: o.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateOrg(
  q: Queryable,
  orgId: string,
  input: { name?: string; slug?: string; base_role?: BaseRole },
) {
  return q
    .updateTable('teams')
    .set(input)
    .where('id', '=', orgId)
    .where('kind', '=', 'org')
    .returningAll()
    .executeTakeFirst();
}

/** Whether the org owns a project. Locks the org row first, so no project joins it meanwhile. */
export async function ownsProject(q: Queryable, orgId: string) {
  await q.selectFrom('teams').select('id').where('id', '=', orgId).forUpdate().execute();
  const row = await q
    .selectFrom('projects')
    .select('id')
    .where('org_id', '=', orgId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
