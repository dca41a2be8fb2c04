// Projects and Spaces (CONTRACT 3). Every method starts with one access check.
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { higher, type Role } from '../access/roles.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { notFound } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { newId } from '../ids.ts';
import * as dal from './projects-dal.ts';

interface ProjectRow {
  id: string;
  name: string;
  owner_id: string;
  created_at: Date;
  role: Role | null;
}
interface SpaceRow {
  id: string;
  project_id: string;
  name: string;
  created_at: Date;
}

export const presentProject = (p: ProjectRow) => ({
  id: p.id,
  name: p.name,
  owner_id: p.owner_id,
  role: p.role as Role,
  created_at: iso(p.created_at),
});
export const presentSpace = (s: SpaceRow) => ({
  id: s.id,
  project_id: s.project_id,
  name: s.name,
  created_at: iso(s.created_at),
});

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
}

export function createProjectsService({ db, clock, access }: Deps) {
  return {
    async create(actor: Actor, input: { name: string }) {
      const now = clock.now();
      return transaction(db, async (trx) => {
        const project = await dal.insertProject(trx, {
          id: newId('project', now),
          owner_id: actor.userId,
          name: input.name,
          created_at: now,
        });
        await dal.insertSpace(trx, {
          id: newId('space', now),
          project_id: project.id,
          name: 'default',
          created_at: now,
        });
        await recordAudit(trx, actor, now, {
          projectId: project.id,
          action: 'project.created',
          targetType: 'project',
          targetId: project.id,
          after: { name: project.name },
        });
        return presentProject({ ...project, role: 'owner' });
      });
    },

    async list(actor: Actor, limit: number, cursor?: string) {
      const rows = await dal.listProjectsFor(db, actor.userId, limit, decodeCursor(cursor, 1)?.[0]);
      return toPage(rows, limit, (p) => [p.id], presentProject);
    },

    async get(actor: Actor, projectId: string) {
      return presentProject(await access.requireProject(actor.userId, projectId, 'project.read'));
    },

    async rename(actor: Actor, projectId: string, input: { name: string }) {
      const before = await access.requireProject(actor.userId, projectId, 'project.rename');
      const now = clock.now();
      return transaction(db, async (trx) => {
        const p = await dal.renameProject(trx, projectId, input.name);
        await recordAudit(trx, actor, now, {
          projectId,
          action: 'project.renamed',
          targetType: 'project',
          targetId: projectId,
          before: { name: before.name },
          after: { name: p.name },
        });
        return presentProject({ ...p, role: before.role });
      });
    },

    async remove(actor: Actor, projectId: string) {
      await access.requireProject(actor.userId, projectId, 'project.delete');
      await transaction(db, async (trx) => {
        await dal.notifyFramesGone(trx, projectId);
        await dal.deleteProject(trx, projectId);
        await recordAudit(trx, actor, clock.now(), {
          projectId,
          action: 'project.deleted',
          targetType: 'project',
          targetId: projectId,
        });
      });
    },

    async access(actor: Actor, projectId: string) {
      const project = await access.requireProject(actor.userId, projectId, 'project.read_access');
      const owner = await dal.ownerContact(db, project.owner_id);
      const rows = await dal.projectTeamAccess(db, projectId);
      const grants = new Map<
        string,
        {
          grant_id: string;
          team: { id: string; name: string; slug: string };
          role: Role;
          created_at: string;
        }
      >();
      const members = new Map<
        string,
        {
          user_id: string;
          email: string;
          name: string;
          role: Role;
          via: Array<{
            source: 'owner' | 'team';
            team_id: string | null;
            team_role: Role | null;
            grant_role: Role | null;
            role: Role;
          }>;
        }
      >();
      members.set(owner.id, {
        user_id: owner.id,
        email: owner.email,
        name: owner.name,
        role: 'owner',
        via: [{ source: 'owner', team_id: null, team_role: null, grant_role: null, role: 'owner' }],
      });
      for (const r of rows) {
        grants.set(r.grant_id, {
          grant_id: r.grant_id,
          team: { id: r.team_id, name: r.team_name, slug: r.team_slug },
          role: r.grant_role,
          created_at: iso(r.granted_at),
        });
        const via = {
          source: 'team' as const,
          team_id: r.team_id,
          team_role: r.team_role,
          grant_role: r.grant_role,
          role: r.via_role as Role,
        };
        const m = members.get(r.user_id);
        if (m) {
          m.via.push(via);
          m.role = higher(m.role, via.role);
        } else
          members.set(r.user_id, {
            user_id: r.user_id,
            email: r.email,
            name: r.name,
            role: via.role,
            via: [via],
          });
      }
      return {
        project_id: projectId,
        owner: { user_id: owner.id, email: owner.email, name: owner.name },
        grants: [...grants.values()],
        members: [...members.values()],
      };
    },

    async listSpaces(actor: Actor, projectId: string, limit: number, cursor?: string) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      const rows = await dal.listSpaces(db, projectId, limit, decodeCursor(cursor, 1)?.[0]);
      return toPage(rows, limit, (s) => [s.id], presentSpace);
    },

    async getSpace(actor: Actor, projectId: string, spaceId: string) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      const space = await dal.spaceById(db, projectId, spaceId);
      if (!space) throw notFound('space');
      return presentSpace(space);
    },

    async createSpace(actor: Actor, projectId: string, input: { name: string }) {
      await access.requireProject(actor.userId, projectId, 'space.manage');
      const now = clock.now();
      const space = await dal.insertSpace(db, {
        id: newId('space', now),
        project_id: projectId,
        name: input.name,
        created_at: now,
      });
      return presentSpace(space);
    },

    async renameSpace(actor: Actor, projectId: string, spaceId: string, input: { name: string }) {
      await access.requireProject(actor.userId, projectId, 'space.manage');
      const space = await dal.renameSpace(db, projectId, spaceId, input.name);
      if (!space) throw notFound('space');
      return presentSpace(space);
    },

    async removeSpace(actor: Actor, projectId: string, spaceId: string) {
      await access.requireProject(actor.userId, projectId, 'space.manage');
      if (!(await dal.deleteSpace(db, projectId, spaceId))) throw notFound('space');
    },
  };
}

export type ProjectsService = ReturnType<typeof createProjectsService>;
