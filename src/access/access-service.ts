// The one place that decides access. Routes and jobs call require*(); nothing else computes a
// role or chooses between 404 and 403. Unreachable things are 404, exactly like missing ones;
// reachable things with too low a role are 403.
import type { Queryable } from '../db/database.ts';
import { notFound, roleTooLow } from '../http/errors.ts';
import { projectWithRole, teamWithRole } from './access-dal.ts';
import { canOnProject, canOnTeam, PROJECT_ACTIONS, TEAM_ACTIONS, type ProjectAction, type Role, type TeamAction } from './roles.ts';

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

export function createAccessService(db: Queryable) {
  return {
    async requireProject(userId: string, projectId: string, action: ProjectAction, q: Queryable = db) {
      const project = await projectWithRole(q, projectId, userId);
      return { ...project!, role: decideProject(project?.role ?? null, action) };
    },

    async requireTeam(userId: string, teamId: string, action: TeamAction, q: Queryable = db) {
      const team = await teamWithRole(q, teamId, userId);
      decideTeam(team?.role, action);
      return team!;
    },
  };
}

export type AccessService = ReturnType<typeof createAccessService>;
