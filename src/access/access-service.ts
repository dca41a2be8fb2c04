// The one place that decides access. Routes and jobs call require*(); nothing else computes a
// role or chooses between 404 and 403. Unreachable things are 404, exactly like missing ones;
// reachable things with too low a role are 403.
import type { Queryable } from '../db/database.ts';
import { notFound, roleTooLow } from '../errors.ts';
import { orgRoleOf, orgWithRole, projectWithRole, teamWithRole } from './access-dal.ts';
import { createRoleMemo, type RoleSeen } from './role-memo.ts';
import {
  canOnOrg,
  canOnProject,
  canOnTeam,
  canShareProject,
  ORG_ACTIONS,
  PROJECT_ACTIONS,
  TEAM_ACTIONS,
  type OrgAction,
  type ProjectAction,
  type Role,
  type TeamAction,
} from './roles.ts';

/** The decision alone, for a role a caller's query already computed (see projectRoleSql). */
export function decideProject(role: Role | null, action: ProjectAction): Role {
  if (role === null) throw notFound('project');
  if (!canOnProject(role, action)) throw roleTooLow(PROJECT_ACTIONS[action]);
  return role;
}

/** The same for a team: a caller who is not a member is told the team does not exist. */
export function decideTeam(role: Role | null | undefined, action: TeamAction): Role {
  if (!role) throw notFound('team');
  if (!canOnTeam(role, action)) throw roleTooLow(TEAM_ACTIONS[action]);
  return role;
}

/** The same for an org (CONTRACT 3a): a caller who is not a member is told it does not exist. */
export function decideOrg(role: Role | null | undefined, action: OrgAction): Role {
  if (!role) throw notFound('org');
  if (!canOnOrg(role, action)) throw roleTooLow(ORG_ACTIONS[action]);
  return role;
}

export function createAccessService(db: Queryable, memo = createRoleMemo()) {
  /**
   * Runs a read of a row with the caller's role and its versions (projectRoleSql, ACCESS_VERSIONS).
   * For a remembered pair, the read leaves the role out (`remembered`): if both versions still
   * hold, in the snapshot that read the row, the remembered role is exact; if either moved, the
   * full read runs. Only on the pool: inside a transaction a read may see versions of its own
   * that a rollback would later hand to another change.
   */
  async function withRole<R extends RoleSeen>(
    q: Queryable,
    userId: string,
    projectId: string,
    read: (remembered: boolean) => Promise<R | undefined>,
  ) {
    if (q !== db) return read(false);
    const hint = memo.hint(userId, projectId);
    if (hint) {
      const row = await read(true);
      if (!row) return undefined;
      if (
        row.caller_access_version === hint.userVersion &&
        row.project_access_version === hint.projectVersion
      ) {
        row.role = hint.role;
        return row;
      }
    }
    const row = await read(false);
    if (row) memo.remember(userId, projectId, row);
    return row;
  }

  async function roleOn(userId: string, projectId: string, q: Queryable = db) {
    return withRole(q, userId, projectId, (remembered) =>
      projectWithRole(q, projectId, userId, remembered),
    );
  }

  return {
    withRole,
    /**
     * The caller's role on the project as last read, with the access versions it holds at, for
     * a write that checks those versions itself (frame-ops-service fromMemory).
     */
    remembered: (userId: string, projectId: string) => memo.hint(userId, projectId),
    /** How many (user, project) roles are remembered: for tests and diagnostics. */
    rememberedRoles: () => memo.size,

    async requireProject(
      userId: string,
      projectId: string,
      action: ProjectAction,
      q: Queryable = db,
    ) {
      const project = await roleOn(userId, projectId, q);
      if (action === 'project.share' && project?.org_id && project.role) {
        // An org's project is shared by the org's owners and admins: their org role decides,
        // read here, exactly, rather than remembered (sharing is rare).
        const orgRole = (await orgRoleOf(q, project.org_id, userId)) ?? null;
        if (!canShareProject(project.role, orgRole)) throw roleTooLow('organization admin');
        return { ...project, role: project.role };
      }
      const role = decideProject(project?.role ?? null, action);
      // decideProject refuses a project the caller does not see, so there is one here.
      if (!project) throw notFound('project');
      return { ...project, role };
    },

    /**
     * May the caller create a project owned by the org (POST /v2/projects with org_id)? Its
     * owners and admins may; a member is told 403, anyone else that the org does not exist.
     * Inside the creating transaction, the membership is locked until it commits.
     */
    async requireOrgProjectCreator(userId: string, orgId: string, q: Queryable = db) {
      return decideOrg(await orgRoleOf(q, orgId, userId, q !== db), 'projects.create');
    },

    /** Another user's role on a project (a frame's owner must reach it), or null. */
    async roleOf(userId: string, projectId: string, q: Queryable = db) {
      return (await roleOn(userId, projectId, q))?.role ?? null;
    },

    async requireTeam(userId: string, teamId: string, action: TeamAction, q: Queryable = db) {
      const team = await teamWithRole(q, teamId, userId);
      decideTeam(team?.role, action);
      // decideTeam refuses a team the caller is not in, so there is one here.
      if (!team) throw notFound('team');
      return team;
    },

    async requireOrg(userId: string, orgId: string, action: OrgAction, q: Queryable = db) {
      const org = await orgWithRole(q, orgId, userId);
      decideOrg(org?.role, action);
      // decideOrg refuses an org the caller is not in, so there is one here.
      if (!org) throw notFound('org');
      return org;
    },
  };
}

export type AccessService = ReturnType<typeof createAccessService>;
