// Teams and organizations: the API serves both with one membership and invitation machinery
// (an org is a team of another kind, with its own routes), so the console shows both with the
// same components. Each kind is one object here: its words, the roles it gives, and its calls
// through the SDK. What only an org has (its base role, its projects) stays in pages/Org.tsx.
import type { QueryKey } from '@tanstack/react-query';
import { fp, type Pager, type Schemas, useList } from '../api.ts';

/** What the console reads of a team or an org. */
export type Group = Pick<Schemas['Team'], 'id' | 'name' | 'slug' | 'role' | 'member_count'>;
/** What the console reads of a team's or an org's invitation. */
export type GroupInvitation = Pick<
  Schemas['Invitation'],
  'id' | 'email' | 'role' | 'status' | 'expires_at'
>;
export type Org = Schemas['Org'];

export interface GroupKind<G extends Group, R extends string> {
  kind: 'team' | 'org';
  /** How a sentence names one: "team", "organization". */
  noun: string;
  /** The roles a member or an invitation may be given: never owner; an org has no viewer. */
  roles: readonly R[];
  /** A slug shown as an example in the new one's form. */
  slugExample: string;
  /** What deleting one takes with it, or what stops it. */
  deleteNote: string;
  /** The cache key of the caller's list, and the console's page of it. */
  listKey: QueryKey;
  listPage: string;
  list: Pager<G>;
  create(body: { name: string; slug: string }): Promise<G>;
  get(id: string): Promise<G>;
  update(id: string, body: { name?: string; slug?: string }): Promise<G>;
  remove(id: string): Promise<unknown>;
  leave(id: string): Promise<unknown>;
  members(id: string): Pager<Schemas['Member']>;
  setRole(id: string, user_id: string, role: R): Promise<unknown>;
  removeMember(id: string, user_id: string): Promise<unknown>;
  invitations(id: string): Pager<GroupInvitation>;
  invite(id: string, body: { email: string; role: R }): Promise<unknown>;
  resend(id: string, invitation_id: string): Promise<unknown>;
  revoke(id: string, invitation_id: string): Promise<unknown>;
}

/** What each section of a team's or an org's page is given. */
export type GroupProps<G extends Group, R extends string> = { kind: GroupKind<G, R>; group: G };

const call = <T>(answer: Promise<{ data?: T; error?: unknown; response: Response }>) =>
  fp().call(answer);
/** A request's path parameters, and a list page's too. */
const at = <P extends Record<string, string>>(path: P) => ({ params: { path } });
const paged = <P extends Record<string, string>>(path: P, cursor: string | undefined) => ({
  params: { path, query: { cursor } },
});

export const TEAM: GroupKind<Schemas['Team'], 'viewer' | 'member' | 'admin'> = {
  kind: 'team',
  noun: 'team',
  roles: ['viewer', 'member', 'admin'],
  slugExample: 'web-team',
  deleteNote: "Deleting removes its members, invitations and the projects' grants to it.",
  listKey: ['teams'],
  listPage: '/console/teams',
  list: (cursor) => fp().api.GET('/v2/teams', { params: { query: { cursor } } }),
  create: (body) => call(fp().api.POST('/v2/teams', { body })),
  get: (id) => call(fp().api.GET('/v2/teams/{team_id}', at({ team_id: id }))),
  update: (id, body) =>
    call(fp().api.PATCH('/v2/teams/{team_id}', { ...at({ team_id: id }), body })),
  remove: (id) => call(fp().api.DELETE('/v2/teams/{team_id}', at({ team_id: id }))),
  leave: (id) => call(fp().api.POST('/v2/teams/{team_id}/leave', at({ team_id: id }))),
  members: (id) => (cursor) =>
    fp().api.GET('/v2/teams/{team_id}/members', paged({ team_id: id }, cursor)),
  setRole: (id, user_id, role) =>
    call(
      fp().api.PATCH('/v2/teams/{team_id}/members/{user_id}', {
        ...at({ team_id: id, user_id }),
        body: { role },
      }),
    ),
  removeMember: (id, user_id) =>
    call(fp().api.DELETE('/v2/teams/{team_id}/members/{user_id}', at({ team_id: id, user_id }))),
  invitations: (id) => (cursor) =>
    fp().api.GET('/v2/teams/{team_id}/invitations', paged({ team_id: id }, cursor)),
  invite: (id, body) =>
    call(fp().api.POST('/v2/teams/{team_id}/invitations', { ...at({ team_id: id }), body })),
  resend: (id, invitation_id) =>
    call(
      fp().api.POST(
        '/v2/teams/{team_id}/invitations/{invitation_id}/resend',
        at({ team_id: id, invitation_id }),
      ),
    ),
  revoke: (id, invitation_id) =>
    call(
      fp().api.DELETE(
        '/v2/teams/{team_id}/invitations/{invitation_id}',
        at({ team_id: id, invitation_id }),
      ),
    ),
};

/** An org's update also sets its base role (pages/Org.tsx). */
export const ORG: GroupKind<Org, 'member' | 'admin'> & {
  update(id: string, body: Schemas['UpdateOrgBody']): Promise<Org>;
} = {
  kind: 'org',
  noun: 'organization',
  roles: ['member', 'admin'],
  slugExample: 'acme',
  deleteNote:
    'Deleting removes its members and invitations. An organization that still owns projects ' +
    'cannot be deleted: delete them first, or ask the operator to move them.',
  listKey: ['orgs'],
  listPage: '/console/orgs',
  list: (cursor) => fp().api.GET('/v2/orgs', { params: { query: { cursor } } }),
  create: (body) => call(fp().api.POST('/v2/orgs', { body })),
  get: (id) => call(fp().api.GET('/v2/orgs/{org_id}', at({ org_id: id }))),
  update: (id, body) => call(fp().api.PATCH('/v2/orgs/{org_id}', { ...at({ org_id: id }), body })),
  remove: (id) => call(fp().api.DELETE('/v2/orgs/{org_id}', at({ org_id: id }))),
  leave: (id) => call(fp().api.POST('/v2/orgs/{org_id}/leave', at({ org_id: id }))),
  members: (id) => (cursor) =>
    fp().api.GET('/v2/orgs/{org_id}/members', paged({ org_id: id }, cursor)),
  setRole: (id, user_id, role) =>
    call(
      fp().api.PATCH('/v2/orgs/{org_id}/members/{user_id}', {
        ...at({ org_id: id, user_id }),
        body: { role },
      }),
    ),
  removeMember: (id, user_id) =>
    call(fp().api.DELETE('/v2/orgs/{org_id}/members/{user_id}', at({ org_id: id, user_id }))),
  invitations: (id) => (cursor) =>
    fp().api.GET('/v2/orgs/{org_id}/invitations', paged({ org_id: id }, cursor)),
  invite: (id, body) =>
    call(fp().api.POST('/v2/orgs/{org_id}/invitations', { ...at({ org_id: id }), body })),
  resend: (id, invitation_id) =>
    call(
      fp().api.POST(
        '/v2/orgs/{org_id}/invitations/{invitation_id}/resend',
        at({ org_id: id, invitation_id }),
      ),
    ),
  revoke: (id, invitation_id) =>
    call(
      fp().api.DELETE(
        '/v2/orgs/{org_id}/invitations/{invitation_id}',
        at({ org_id: id, invitation_id }),
      ),
    ),
};

/** "team" → "Team", for a label or a heading that starts with the noun. */
export const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The caller's teams or orgs (each with the caller's role), cached under the kind's key. */
export const useGroups = <G extends Group, R extends string>(kind: GroupKind<G, R>) =>
  useList(kind.listKey, kind.list);
export const useTeams = () => useGroups(TEAM);
export const useOrgs = () => useGroups(ORG);
