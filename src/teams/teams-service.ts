// Teams (spec 2 and 4): create, list, read, rename, delete, leave.
import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Role } from '../access/roles.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { notFound, ownerImmutable } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { notifyOfMembership } from '../notifications/notify.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { newId } from '../ids.ts';
import * as dal from './teams-dal.ts';

interface TeamRow {
  id: string;
  name: string;
  slug: string;
  owner_id: string;
  created_at: Date;
}
/** A team as the caller sees it: one object literal, not a spread copy (lists build many). */
export const presentTeam = (t: TeamRow, role: Role, memberCount: number) => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  owner_id: t.owner_id,
  created_at: iso(t.created_at),
  role,
  member_count: memberCount,
});
const snapshot = (t: TeamRow) => ({ name: t.name, slug: t.slug });

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
}

export function createTeamsService({ db, clock, access }: Deps) {
  return {
    async create(actor: Actor, input: { name: string; slug: string }) {
      const now = clock.now();
      return transaction(db, async (trx) => {
        const team = await dal.insertTeam(trx, {
          id: newId('team', now),
          name: input.name,
          slug: input.slug,
          ownerId: actor.userId,
          now,
        });
        await dal.insertMember(trx, { teamId: team.id, userId: actor.userId, role: 'owner', now });
        await recordAudit(trx, actor, now, {
          teamId: team.id,
          action: 'team.created',
          targetType: 'team',
          targetId: team.id,
          after: snapshot(team),
        });
        return presentTeam(team, 'owner', 1);
      });
    },

    async list(actor: Actor, limit: number, cursor?: string) {
      const rows = await dal.listTeamsFor(db, actor.userId, limit, decodeCursor(cursor, 1)?.[0]);
      return toPage(
        rows,
        limit,
        (t) => [t.id],
        (t) => presentTeam(t, t.role, t.member_count),
      );
    },

    async get(actor: Actor, teamId: string) {
      const team = await access.requireTeam(actor.userId, teamId, 'team.read');
      return presentTeam(team, team.role, team.member_count);
    },

    async update(actor: Actor, teamId: string, input: { name?: string; slug?: string }) {
      const before = await access.requireTeam(actor.userId, teamId, 'team.rename');
      const now = clock.now();
      return transaction(db, async (trx) => {
        const team = await dal.updateTeam(trx, teamId, input);
        if (!team) throw notFound('team');
        await recordAudit(trx, actor, now, {
          teamId,
          action: 'team.updated',
          targetType: 'team',
          targetId: teamId,
          before: snapshot(before),
          after: snapshot(team),
        });
        return presentTeam(team, before.role, team.member_count);
      });
    },

    /** Deletes the team with its memberships, invitations and grants (ON DELETE CASCADE). */
    async remove(actor: Actor, teamId: string) {
      const team = await access.requireTeam(actor.userId, teamId, 'team.delete');
      await transaction(db, async (trx) => {
        await dal.deleteTeam(trx, teamId);
        await recordAudit(trx, actor, clock.now(), {
          teamId,
          action: 'team.deleted',
          targetType: 'team',
          targetId: teamId,
          before: snapshot(team),
        });
      });
    },

    async leave(actor: Actor, teamId: string) {
      const team = await access.requireTeam(actor.userId, teamId, 'team.read');
      if (team.role === 'owner')
        throw ownerImmutable('The owner cannot leave the team; delete the team instead.');
      await transaction(db, async (trx) => {
        await dal.deleteMember(trx, teamId, actor.userId);
        const left = { teamId, userId: actor.userId, role: team.role, at: clock.now() };
        await notifyOfMembership(trx, { ...left, change: 'removed' });
        await recordAudit(trx, actor, clock.now(), {
          teamId,
          action: 'member.left',
          targetType: 'member',
          targetId: actor.userId,
          before: { role: team.role },
        });
      });
    },
  };
}

export type TeamsService = ReturnType<typeof createTeamsService>;
