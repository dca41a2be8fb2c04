// Teams and organizations share one membership and invitation machinery: an organization is a
// teams row of kind 'org' (migrations/0015), its members are team_members rows and its
// invitations are invitations rows. What differs by kind is gathered here: the access check
// that guards it, the roles it gives, and the words that name it to people.
import { decideOrg, decideTeam, type AccessService } from '../access/access-service.ts';
import type { MembershipAction, Role } from '../access/roles.ts';
import { fieldError } from '../errors.ts';

export type Kind = 'team' | 'org';

/** How a message names the kind to people. */
export const KIND_NOUN: Record<Kind, string> = { team: 'team', org: 'organization' };
const A_KIND: Record<Kind, string> = { team: 'a team', org: 'an organization' };

/** The roles a membership or an invitation of each kind may be given: never `owner` (exactly one,
 *  its creator); an org has no viewer (CONTRACT 3a). */
export const GIVEN_ROLES_OF: Record<Kind, readonly Role[]> = {
  team: ['viewer', 'member', 'admin'],
  org: ['member', 'admin'],
};

/** "a, b or c" */
const orList = (words: readonly string[]) =>
  words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');

export const givenRolesMessage = (kind: Kind) =>
  `must be ${orList(GIVEN_ROLES_OF[kind])}: ` +
  (kind === 'org'
    ? "an organization's role is one of these; it has no viewer and exactly one owner, its creator"
    : "a member's role is one of these; a team has exactly one owner, its creator");

/** The request schemas refuse these already; this holds for callers other than HTTP too. */
export function refuseRole(kind: Kind, role: Role, path = 'role') {
  if (GIVEN_ROLES_OF[kind].includes(role)) return;
  throw fieldError(
    path,
    'role_not_allowed',
    role === 'owner'
      ? `The owner role cannot be given; ${A_KIND[kind]} has exactly one owner, its creator.`
      : `The ${role} role cannot be given; ${A_KIND[kind]}'s roles are ${GIVEN_ROLES_OF[kind].join(', ')}.`,
  );
}

/** The access check of the kind, for the actions both kinds have. */
export function requireOfKind(
  access: Pick<AccessService, 'requireTeam' | 'requireOrg'>,
  kind: Kind,
) {
  return (userId: string, id: string, action: MembershipAction) =>
    kind === 'org' ? access.requireOrg(userId, id, action) : access.requireTeam(userId, id, action);
}

/** The decision of the kind, for a role a caller's query already read (decideTeam, decideOrg). */
export function decideOfKind(kind: Kind) {
  return (role: Role | null | undefined, action: MembershipAction) =>
    kind === 'org' ? decideOrg(role, action) : decideTeam(role, action);
}
