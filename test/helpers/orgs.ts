// Organizations for tests, written straight into the database (CONTRACT 3a: a teams row of kind
// 'org' and its owner's membership), so that tests of the access module, projects and the
// operator need not go through the org routes. Tests of the org routes create orgs over HTTP.
import { expect } from 'vitest';
import type { BaseRole, Role } from '../../src/db/schema.ts';
import { newId } from '../../src/ids.ts';
import { transaction } from '../../src/db/database.ts';
import type { TestApp } from './app.ts';
import type { TestUser } from './factories.ts';

let n = 0;

export interface TestOrg {
  id: string;
  slug: string;
  name: string;
  owner_id: string;
}

export async function newOrg(
  t: TestApp,
  owner: TestUser,
  o: { name?: string; baseRole?: BaseRole } = {},
): Promise<TestOrg> {
  const now = t.clock.now();
  const org = {
    id: newId('org', now),
    name: o.name ?? 'Org',
    slug: `o-${process.pid}-${++n}-${Math.random().toString(36).slice(2, 8)}`,
    owner_id: owner.id,
  };
  await transaction(t.db, async (trx) => {
    await trx
      .insertInto('teams')
      .values({
        ...org,
        kind: 'org',
        base_role: o.baseRole ?? 'viewer',
        billing_status: 'active',
        created_at: now,
      })
      .execute();
    await trx
      .insertInto('team_members')
      .values({ team_id: org.id, user_id: owner.id, role: 'owner', joined_at: now })
      .execute();
  });
  return org;
}

export async function addOrgMember(
  t: TestApp,
  orgId: string,
  user: TestUser,
  role: Exclude<Role, 'owner' | 'viewer'>,
) {
  await t.db
    .insertInto('team_members')
    .values({ team_id: orgId, user_id: user.id, role, joined_at: t.clock.now() })
    .execute();
}

/** A project owned by the org, created over HTTP by an org owner or admin (`org_id`). */
export async function newOrgProject(t: TestApp, creator: TestUser, orgId: string, name = 'P') {
  const r = await t.post('/v2/projects', { token: creator.token, body: { name, org_id: orgId } });
  expect(r.status, r.text).toBe(201);
  return r.json as { id: string; name: string; owner_id: string; owner_kind: 'org' };
}
