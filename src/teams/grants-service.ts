// Grants (spec 2 and 4): share a project with a team at a capped role. Creating a grant, or
// raising one, needs both team admin and ownership of the project, so that a team admin can
// never widen access to somebody else's project.
import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { rank, type Role } from '../access/roles.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { notFound, unprocessable } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { GRANT_ROLE_MESSAGE } from './teams-schemas.ts';
import { pageById } from '../db/paging.ts';
import * as dal from './grants-dal.ts';

interface GrantRow {
  id: string;
  team_id: string;
  project_id: string;
  role: Role;
  created_at: Date;
}
export const presentGrant = (g: GrantRow) => ({
  id: g.id,
  team_id: g.team_id,
  project_id: g.project_id,
  role: g.role,
  created_at: iso(g.created_at),
});

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
}

// The request schema already refuses it; this holds for callers other than HTTP too.
const refuseOwnerGrant = (role: Role) => {
  if (role !== 'owner') return;
  throw unprocessable('role_not_allowed', `role: ${GRANT_ROLE_MESSAGE}`, [
    { path: 'role', message: GRANT_ROLE_MESSAGE },
  ]);
};

export function createGrantsService({ db, clock, access }: Deps) {
  async function grantOf(teamId: string, grantId: string) {
    const g = await dal.grantById(db, teamId, grantId);
    if (!g) throw notFound('grant');
    return g;
  }

  return {
    async list(actor: Actor, teamId: string, limit: number, cursor?: string) {
      await access.requireTeam(actor.userId, teamId, 'grants.read');
      return pageById(dal.grantsOfTeam(db, teamId), limit, cursor, presentGrant);
    },

    async create(actor: Actor, teamId: string, input: { project_id: string; role: Role }) {
      await access.requireTeam(actor.userId, teamId, 'grants.manage');
      refuseOwnerGrant(input.role);
      await access.requireProject(actor.userId, input.project_id, 'project.share');
      const now = clock.now();
      return transaction(db, async (trx) => {
        const g = await dal.insertGrant(trx, {
          id: newId('grant', now),
          team_id: teamId,
          project_id: input.project_id,
          role: input.role,
          created_by: actor.userId,
          created_at: now,
        });
        await recordAudit(trx, actor, now, {
          teamId,
          projectId: g.project_id,
          action: 'grant.created',
          targetType: 'grant',
          targetId: g.id,
          after: { project_id: g.project_id, role: g.role },
        });
        return presentGrant(g);
      });
    },

    async update(actor: Actor, teamId: string, grantId: string, input: { role: Role }) {
      await access.requireTeam(actor.userId, teamId, 'grants.manage');
      refuseOwnerGrant(input.role);
      const now = clock.now();
      // The previous role is read under a row lock in the same transaction as the write: whether
      // this is a raise (which needs the project owner) is decided against the value the write
      // replaces, so a team admin re-sending an old role can never undo a lowering that committed
      // in between. Concurrent changes of one grant apply one after the other.
      return transaction(db, async (trx) => {
        const before = await dal.grantForUpdate(trx, teamId, grantId);
        if (!before) throw notFound('grant');
        if (rank(input.role) > rank(before.role))
          await access.requireProject(actor.userId, before.project_id, 'project.share', trx);
        const g = await dal.setGrantRole(trx, teamId, grantId, input.role);
        await recordAudit(trx, actor, now, {
          teamId,
          projectId: g.project_id,
          action: 'grant.role_changed',
          targetType: 'grant',
          targetId: g.id,
          before: { role: before.role },
          after: { role: g.role },
        });
        return presentGrant(g);
      });
    },

    async remove(actor: Actor, teamId: string, grantId: string) {
      await access.requireTeam(actor.userId, teamId, 'grants.manage');
      const before = await grantOf(teamId, grantId);
      await transaction(db, async (trx) => {
        if (!(await dal.deleteGrant(trx, teamId, grantId))) throw notFound('grant');
        await recordAudit(trx, actor, clock.now(), {
          teamId,
          projectId: before.project_id,
          action: 'grant.deleted',
          targetType: 'grant',
          targetId: grantId,
          before: { project_id: before.project_id, role: before.role },
        });
      });
    },
  };
}

export type GrantsService = ReturnType<typeof createGrantsService>;
