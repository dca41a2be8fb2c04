// Organizations (CONTRACT 3a): create, list, read, rename and base_role, delete while empty,
// leave. An org is a teams row of kind 'org': its slug is in the teams' namespace, its owner
// guardrails are the database's (team_members_guard), its members and invitations are served by
// the team services built for kind 'org' (services.ts).
import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Role } from '../access/roles.ts';
import type { BaseRole } from '../db/schema.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { conflict, notFound, ownerImmutable } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { notifyOfMembership } from '../notifications/notify.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { newId } from '../ids.ts';
import * as teams from '../teams/teams-dal.ts';
import * as dal from './orgs-dal.ts';

interface OrgRow {
  id: string;
  name: string;
  slug: string;
  owner_id: string;
  base_role: BaseRole | null;
  billing_status: 'active' | 'past_due' | null;
  created_at: Date;
  member_count: number;
}

/** An org's record with the caller's role. base_role and billing_status are set on every org row
 *  (teams_org_columns); the fallbacks only satisfy the type shared with teams. */
export const presentOrg = (o: OrgRow, role: Role) => ({
  id: o.id,
  name: o.name,
  slug: o.slug,
  owner_id: o.owner_id,
  base_role: o.base_role ?? 'viewer',
  billing_status: o.billing_status ?? 'active',
  created_at: iso(o.created_at),
  role: role as Exclude<Role, 'viewer'>,
  member_count: o.member_count,
});
const snapshot = (o: OrgRow) => ({ name: o.name, slug: o.slug, base_role: o.base_role });

interface Deps {
  db: Database;
  clock: Clock;
  access: Pick<AccessService, 'requireOrg'>;
}

export function createOrgsService({ db, clock, access }: Deps) {
  return {
    async create(actor: Actor, input: { name: string; slug: string }) {
      const now = clock.now();
      return transaction(db, async (trx) => {
        const org = await dal.insertOrg(trx, {
          id: newId('org', now),
          name: input.name,
          slug: input.slug,
          ownerId: actor.userId,
          now,
        });
        await teams.insertMember(trx, { teamId: org.id, userId: actor.userId, role: 'owner', now });
        await recordAudit(trx, actor, now, {
          teamId: org.id,
          action: 'org.created',
          targetType: 'org',
          targetId: org.id,
          after: snapshot(org),
        });
        return presentOrg({ ...org, member_count: 1 }, 'owner');
      });
    },

    async list(actor: Actor, limit: number, cursor?: string) {
      const after = decodeCursor(cursor, 1)?.[0];
      const rows = await teams.listTeamsFor(db, actor.userId, limit, after, 'org');
      return toPage(
        rows,
        limit,
        (o) => [o.id],
        (o) => presentOrg(o, o.role),
      );
    },

    async get(actor: Actor, orgId: string) {
      const org = await access.requireOrg(actor.userId, orgId, 'org.read');
      return presentOrg(org, org.role);
    },

    /** Rename, new slug, new base_role (admin). A new base_role moves the access versions of
     *  the org's projects (migrations/0015), so every instance obeys it on the next request. */
    async update(
      actor: Actor,
      orgId: string,
      input: { name?: string; slug?: string; base_role?: BaseRole },
    ) {
      const before = await access.requireOrg(actor.userId, orgId, 'org.update');
      const now = clock.now();
      return transaction(db, async (trx) => {
        const org = await dal.updateOrg(trx, orgId, input);
        if (!org) throw notFound('org');
        await recordAudit(trx, actor, now, {
          teamId: orgId,
          action: 'org.updated',
          targetType: 'org',
          targetId: orgId,
          before: snapshot(before),
          after: snapshot(org),
        });
        return presentOrg(org, before.role);
      });
    },

    /** Deletes the org with its memberships and invitations, only while it owns no project
     *  (projects.org_id is ON DELETE RESTRICT: the database refuses it too). */
    async remove(actor: Actor, orgId: string) {
      const org = await access.requireOrg(actor.userId, orgId, 'org.delete');
      await transaction(db, async (trx) => {
        if (await dal.ownsProject(trx, orgId))
          throw conflict(
            'org_not_empty',
            'This organization still owns projects; delete them or have the operator move them first.',
          );
        await teams.deleteTeam(trx, orgId);
        await recordAudit(trx, actor, clock.now(), {
          teamId: orgId,
          action: 'org.deleted',
          targetType: 'org',
          targetId: orgId,
          before: snapshot(org),
        });
      });
    },

    async leave(actor: Actor, orgId: string) {
      const org = await access.requireOrg(actor.userId, orgId, 'org.read');
      if (org.role === 'owner')
        throw ownerImmutable(
          'The owner cannot leave the organization; the operator can transfer its ownership.',
        );
      await transaction(db, async (trx) => {
        await teams.deleteMember(trx, orgId, actor.userId);
        const left = { teamId: orgId, userId: actor.userId, role: org.role, at: clock.now() };
        await notifyOfMembership(trx, { ...left, change: 'removed' });
        await recordAudit(trx, actor, clock.now(), {
          teamId: orgId,
          action: 'member.left',
          targetType: 'member',
          targetId: actor.userId,
          before: { role: org.role },
        });
      });
    },
  };
}

export type OrgsService = ReturnType<typeof createOrgsService>;
