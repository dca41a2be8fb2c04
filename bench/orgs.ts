// Organizations in the bench dataset (CONTRACT 3a): orgs with an owner, admins and members and a
// base_role, and projects they own, so that the project read by the org path is measured beside
// the read by a grant. Drawn apart from teams and projects: the other scenarios see the same
// data as before.
//
// At scale 1: 2k orgs, 20k org memberships (Zipf sizes, the largest about a twentieth of all
// users), 10k org projects; base_role mostly viewer or member, a few none or admin.
import type { BaseRole, Role } from '../src/db/schema.ts';
import type { Database } from '../src/db/database.ts';
import { newId } from '../src/ids.ts';
import { randomInt, shuffle, weighted, zipfSizes, type Random } from './shape.ts';
import { at } from '../test/helpers/checked.ts';

export interface OrgMember {
  user: number;
  role: Extract<Role, 'owner' | 'admin' | 'member'>;
  joinedAt: Date;
}
/** members[0] is the owner. */
export interface Org {
  id: string;
  name: string;
  slug: string;
  baseRole: BaseRole;
  createdAt: Date;
  members: OrgMember[];
}
export interface OrgProject {
  id: string;
  spaceId: string;
  org: number;
  name: string;
  createdAt: Date;
}

export function drawOrgs(random: Random, scale: number, users: number, now: Date) {
  const n = (full: number) => Math.max(1, Math.round(full * scale));
  const stamp = now;
  const sizes = shuffle(
    random,
    zipfSizes(n(2_000), n(20_000), 0.9, 1, Math.max(1, Math.ceil(users / 20))),
  );
  const orgs: Org[] = sizes.map((size, i) => {
    const taken = new Set<number>();
    const members: OrgMember[] = [];
    while (taken.size < Math.min(size, users)) {
      const u = randomInt(random, users);
      if (taken.has(u)) continue;
      taken.add(u);
      members.push({
        user: u,
        role:
          members.length === 0
            ? 'owner'
            : weighted(random, [
                ['admin', 10],
                ['member', 90],
              ]),
        joinedAt: stamp,
      });
    }
    return {
      id: newId('org', stamp),
      name: `Org ${i}`,
      slug: `org-${i}`,
      baseRole: weighted<BaseRole>(random, [
        ['none', 5],
        ['viewer', 50],
        ['member', 40],
        ['admin', 5],
      ]),
      createdAt: stamp,
      members,
    };
  });
  const orgProjects: OrgProject[] = Array.from({ length: n(10_000) }, (_, i) => ({
    id: newId('project', stamp),
    spaceId: newId('space', stamp),
    org: randomInt(random, orgs.length),
    name: `Org project ${i}`,
    createdAt: stamp,
  }));
  return { orgs, orgProjects };
}

/** Writes the orgs (each with its owner row in one transaction, as teams_have_owner requires). */
export async function seedOrgs(
  db: Database,
  orgs: Org[],
  orgProjects: OrgProject[],
  userIds: (u: number) => string,
) {
  const BATCH = 1_000;
  for (let i = 0; i < orgs.length; i += BATCH) {
    const batch = orgs.slice(i, i + BATCH);
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('teams')
        .values(
          batch.map((o) => ({
            id: o.id,
            name: o.name,
            slug: o.slug,
            owner_id: userIds(at(o.members, 0).user),
            created_at: o.createdAt,
            kind: 'org' as const,
            base_role: o.baseRole,
            billing_status: 'active' as const,
          })),
        )
        .execute();
      const members = batch.flatMap((o) =>
        o.members.map((m) => ({
          team_id: o.id,
          user_id: userIds(m.user),
          role: m.role,
          joined_at: m.joinedAt,
        })),
      );
      // PostgreSQL takes at most 65,535 parameters per statement: 4 per row.
      for (let j = 0; j < members.length; j += 5_000)
        await trx
          .insertInto('team_members')
          .values(members.slice(j, j + 5_000))
          .execute();
    });
  }
  for (let i = 0; i < orgProjects.length; i += BATCH) {
    const batch = orgProjects.slice(i, i + BATCH);
    await db
      .insertInto('projects')
      .values(
        batch.map((p) => ({
          id: p.id,
          owner_id: null,
          org_id: at(orgs, p.org).id,
          name: p.name,
          created_at: p.createdAt,
        })),
      )
      .execute();
    await db
      .insertInto('spaces')
      .values(
        batch.map((p) => ({
          id: p.spaceId,
          project_id: p.id,
          name: 'default',
          created_at: p.createdAt,
        })),
      )
      .execute();
  }
}
