// The role rules, as pure functions: role order, effective role on a shared project (spec 3,
// CONTRACT 3) and the role-to-action matrix. access-dal.ts computes the same effective role in
// SQL; test/access/access-model.test.ts checks the two agree.
import type { Role } from '../db/schema.ts';
export type { Role };

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

/**
 * The caller's role on a project: owner for its owner; otherwise the highest, over the
 * caller's teams holding a grant on it, of min(team role, grant role); null if none (404).
 */
export function effectiveProjectRole(isOwner: boolean, shares: Share[]): Role | null {
  if (isOwner) return 'owner';
  let best: Role | null = null;
  for (const s of shares) {
    const r = lower(s.teamRole, s.grantRole);
    best = best === null ? r : higher(best, r);
  }
  return best;
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
  'org.delete': 'owner',
} as const satisfies Record<string, Role>;

export type OrgAction = keyof typeof ORG_ACTIONS;
/** The actions a team and an org share: the membership and invitation machinery uses these. */
export type MembershipAction = TeamAction & OrgAction;

export const canOnOrg = (role: Role, action: OrgAction) => atLeast(role, ORG_ACTIONS[action]);
