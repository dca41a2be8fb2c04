// The role rules, as pure functions: role order, effective role on a project reached by its
// owner, an organization or team grants (spec 3, CONTRACT 3 and 3a) and the role-to-action
// matrix. access-dal.ts computes the same effective role in SQL;
// test/access/access-model.test.ts checks the two agree.
import type { BaseRole, Role } from '../db/schema.ts';
export type { BaseRole, Role };

export const ROLES: readonly Role[] = ['viewer', 'member', 'admin', 'owner'];
export const GRANTABLE_ROLES = ['viewer', 'member', 'admin'] as const;

export const rank = (r: Role) => ROLES.indexOf(r);
export const atLeast = (r: Role, min: Role) => rank(r) >= rank(min);
export const lower = (a: Role, b: Role): Role => (rank(a) <= rank(b) ? a : b);
export const higher = (a: Role, b: Role): Role => (rank(a) >= rank(b) ? a : b);

export interface Share {
  teamRole: Role;
  grantRole: Role;
}

/** The caller's membership of the organization that owns the project (CONTRACT 3a). */
export interface OrgPath {
  orgRole: Role;
  baseRole: BaseRole;
}

/**
 * The role the org path gives on a project the org owns: its owner is owner, an admin is
 * admin, a member has the org's base_role; base_role 'none' gives nothing by this path.
 */
export function orgProjectRole(orgRole: Role, baseRole: BaseRole): Role | null {
  if (orgRole === 'owner' || orgRole === 'admin') return orgRole;
  return baseRole === 'none' ? null : baseRole;
}

/**
 * The caller's role on a project: owner for its (user) owner; otherwise the highest of the
 * org path (when an org the caller belongs to owns it) and, over the caller's teams holding a
 * grant on it, min(team role, grant role); null if none (404).
 */
export function effectiveProjectRole(
  isOwner: boolean,
  shares: Share[],
  org: OrgPath | null = null,
): Role | null {
  if (isOwner) return 'owner';
  let best: Role | null = org ? orgProjectRole(org.orgRole, org.baseRole) : null;
  for (const s of shares) {
    const r = lower(s.teamRole, s.grantRole);
    best = best === null ? r : higher(best, r);
  }
  return best;
}

/**
 * May the caller share the project (create, change or remove its grants)? For a user's project
 * its owner; for an org's project the org's owners and admins by their org role (grants "stand
 * for the caller must own the project", CONTRACT 3a), not an admin by a team grant nor a member
 * whose base_role is admin. `role` is the effective role (null: the project is out of reach).
 */
export function canShareProject(role: Role, orgRole: Role | null): boolean {
  if (orgRole === null) return role === 'owner';
  return orgRole === 'owner' || orgRole === 'admin';
}

/** Minimum project role per action (CONTRACT 3). */
export const PROJECT_ACTIONS = {
  'project.read': 'viewer',
  'project.read_access': 'viewer',
  'env.read_values': 'member',
  'frame.operate': 'member',
  'frame.edit': 'member',
  'project.rename': 'admin',
  'space.manage': 'admin',
  'frame.manage': 'admin',
  'domain.manage': 'admin',
  'volume.manage': 'admin',
  'agent.manage': 'admin',
  'webhook.manage': 'admin',
  'notifications.manage': 'admin',
  'project.audit': 'admin',
  'project.delete': 'owner',
  'project.share': 'owner',
} as const satisfies Record<string, Role>;

/** Minimum team role per action (spec 2 and 4). */
export const TEAM_ACTIONS = {
  'team.read': 'viewer',
  'members.read': 'viewer',
  'grants.read': 'viewer',
  'team.rename': 'admin',
  'members.manage': 'admin',
  'invitations.manage': 'admin',
  'grants.manage': 'admin',
  'audit.read': 'admin',
  'team.delete': 'owner',
} as const satisfies Record<string, Role>;

export type ProjectAction = keyof typeof PROJECT_ACTIONS;
export type TeamAction = keyof typeof TEAM_ACTIONS;

export const canOnProject = (role: Role, action: ProjectAction) =>
  atLeast(role, PROJECT_ACTIONS[action]);
export const canOnTeam = (role: Role, action: TeamAction) => atLeast(role, TEAM_ACTIONS[action]);

/**
 * Minimum org role per action (CONTRACT 3a). An org has no viewer, so every member reads it;
 * its members' role on the org's projects is a separate matter (base_role).
 */
export const ORG_ACTIONS = {
  'org.read': 'member',
  'members.read': 'member',
  'org.update': 'admin',
  'members.manage': 'admin',
  'invitations.manage': 'admin',
  'projects.create': 'admin',
  'audit.read': 'admin',
  'org.delete': 'owner',
} as const satisfies Record<string, Role>;

export type OrgAction = keyof typeof ORG_ACTIONS;
/** The actions a team and an org share: the membership and invitation machinery uses these. */
export type MembershipAction = TeamAction & OrgAction;

export const canOnOrg = (role: Role, action: OrgAction) => atLeast(role, ORG_ACTIONS[action]);
