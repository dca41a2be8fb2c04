// Projects and Spaces (CONTRACT 3). Every method starts with one access check.
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Role } from '../access/roles.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { notFound } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { decodeCursor, toPage } from '../paging.ts';
import { newId } from '../ids.ts';
import * as dal from './projects-dal.ts';
import { explainAccess, type AccessFacts } from './project-access.ts';

interface ProjectRow {
  id: string;
  name: string;
  owner_id: string | null;
  org_id: string | null;
  created_at: Date;
  role: Role | null;
}
interface SpaceRow {
  id: string;
  project_id: string;
  name: string;
  created_at: Date;
}

/** owner_id is the owning user's id or the owning org's (CONTRACT 3a); owner_kind says which. */
export const presentProject = (p: ProjectRow) => ({
  id: p.id,
  name: p.name,
  owner_id: p.org_id ?? p.owner_id ?? '',
  owner_kind: p.org_id ? ('org' as const) : ('user' as const),
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
    /** With org_id the org owns it: its owners and admins may (requireOrgProjectCreator). */
    async create(actor: Actor, input: { name: string; org_id?: string }) {
      const now = clock.now();
      const orgId = input.org_id;
      return transaction(db, async (trx) => {
        const orgRole = orgId && (await access.requireOrgProjectCreator(actor.userId, orgId, trx));
        const project = await dal.insertProject(trx, {
          id: newId('project', now),
          owner_id: orgId ? null : actor.userId,
          org_id: orgId ?? null,
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
          after: orgId ? { name: project.name, org_id: orgId } : { name: project.name },
        });
        // The creator's role by the org path (an org admin is admin); grants come later.
        return presentProject({ ...project, role: orgRole || 'owner' });
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
      let user: AccessFacts['user'] = null;
      let org: AccessFacts['org'] = null;
      if (project.owner_id) {
        const u = await dal.ownerContact(db, project.owner_id);
        user = { user_id: u.id, email: u.email, name: u.name };
      } else if (project.org_id) {
        const o = await dal.orgWithOwner(db, project.org_id);
        org = {
          id: o.id,
          name: o.name,
          slug: o.slug,
          base_role: o.base_role ?? 'none',
          owner: { user_id: o.owner_id, email: o.owner_email, name: o.owner_name },
          members: await dal.orgMembersForAccess(db, o.id),
        };
      }
      const teamPaths = await dal.projectTeamAccess(db, projectId);
      return explainAccess({ projectId, user, org, teamPaths });
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
