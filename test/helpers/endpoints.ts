// A catalogue of the endpoints of the team, identity and project area, each with the status
// every kind of caller must get (CONTRACT 1 to 4, spec 3, 4 and 7). test/authz-matrix.test.ts
// turns it into one test per endpoint and caller; the catalogue is data, so a new endpoint is
// one more entry here.
//
// The world: a team whose owner, admin, member and viewer are four users; an outsider who is
// signed in but in no team of theirs; a project owned by the team owner and shared with the
// team with grant role `admin`, so a team role is also the effective project role. Actions
// that destroy or use up their target get a fresh target per call.
import { randomBytes } from 'node:crypto';
import { hashSecret, newSecret } from '../../src/secrets.ts';
import type { TestApp } from './app.ts';
import {
  addMember,
  FACTORY_PASSWORD,
  invitationToken,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from './factories.ts';

/** Who calls. `revoked` sends a bearer token that was revoked (it belonged to the team owner). */
export const CALLERS = [
  'owner',
  'admin',
  'member',
  'viewer',
  'outsider',
  'anonymous',
  'revoked',
] as const;
export type Caller = (typeof CALLERS)[number];
type Person = 'owner' | 'admin' | 'member' | 'viewer' | 'outsider';
type TeamRole = 'owner' | 'admin' | 'member' | 'viewer';

export interface World {
  t: TestApp;
  users: Record<Person, TestUser>;
  /** Owns other teams; sends invitations addressed to the callers. Never a member of the world's team. */
  host: TestUser;
  revokedToken: string;
  team: { id: string; slug: string };
  /** Owned by the team owner, shared with the team with grant role admin. */
  project: { id: string };
  /** The project's `default` space. */
  space: { id: string };
  grantId: string;
}

/** What to send. `token`: undefined means the caller's own token, null means none. */
export interface Prepared {
  path: string;
  body?: unknown;
  token?: string | null;
}

export interface Endpoint {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** The path as the OpenAPI document spells it. */
  route: string;
  /** Which situation this row tests, when an endpoint has more than one row. */
  variant?: string;
  /** How the route authenticates: `user` (default), `optional` (a token is checked if sent), `none`. */
  auth?: 'user' | 'optional' | 'none';
  expect: Record<Exclude<Caller, 'revoked'>, number>;
  prepare(w: World, caller: Caller): Promise<Prepared>;
}

export const unique = () => randomBytes(5).toString('hex');

const RANK: Record<TeamRole, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

/** A team or project endpoint with a minimum role: lower roles 403, outsiders 404, anonymous 401. */
export function minRole(min: TeamRole, ok: number): Endpoint['expect'] {
  const at = (r: TeamRole) => (RANK[r] >= RANK[min] ? ok : 403);
  return {
    owner: at('owner'),
    admin: at('admin'),
    member: at('member'),
    viewer: at('viewer'),
    outsider: 404,
    anonymous: 401,
  };
}

/** Any signed-in user gets `ok`; anonymous 401. */
export function signedIn(ok: number): Endpoint['expect'] {
  return { owner: ok, admin: ok, member: ok, viewer: ok, outsider: ok, anonymous: 401 };
}

/** Status for the `revoked` caller: like anonymous, except that a checked token is always 401. */
export function expectedFor(e: Endpoint, caller: Caller): number {
  if (caller !== 'revoked') return e.expect[caller];
  return e.auth === 'none' ? e.expect.anonymous : 401;
}

/** The person behind a caller; anonymous and revoked callers act on the owner's resources. */
/** A verification link (its token) for a fresh, unverified account with FACTORY_PASSWORD. */
async function verificationLink(t: TestApp): Promise<string> {
  const user = await newUser(t, 'unproven');
  const token = newSecret('vfy');
  const now = t.clock.now();
  await t.db
    .insertInto('email_verifications')
    .values({
      email: user.email,
      user_id: user.id,
      token_hash: hashSecret(token),
      created_at: now,
      expires_at: new Date(now.getTime() + 3600_000),
    })
    .execute();
  return token;
}

export function personOf(w: World, caller: Caller): TestUser {
  return caller === 'anonymous' || caller === 'revoked' ? w.users.owner : w.users[caller];
}

export function tokenOf(w: World, caller: Caller): string | undefined {
  if (caller === 'anonymous') return undefined;
  if (caller === 'revoked') return w.revokedToken;
  return w.users[caller].token;
}

async function ok<T = any>(
  p: Promise<{ status: number; json: any; text: string }>,
  status: number,
): Promise<T> {
  const r = await p;
  if (r.status !== status)
    throw new Error(`fixture request failed: expected ${status}, got ${r.status}: ${r.text}`);
  return r.json as T;
}

export async function buildWorld(t: TestApp): Promise<World> {
  const users = {
    owner: await newUser(t, 'owner'),
    admin: await newUser(t, 'admin'),
    member: await newUser(t, 'member'),
    viewer: await newUser(t, 'viewer'),
    outsider: await newUser(t, 'outsider'),
  };
  const host = await newUser(t, 'host');
  const team = await newTeam(t, users.owner, 'World');
  await addMember(t, team.id, users.admin, 'admin');
  await addMember(t, team.id, users.member, 'member');
  await addMember(t, team.id, users.viewer, 'viewer');
  // The outsider is in a team of their own, so "in no team" is not what hides the world's team.
  await newTeam(t, users.outsider, 'Elsewhere');
  const project = await newProject(t, users.owner, 'World project');
  const grantId = await share(t, team.id, project.id, 'admin');
  const spaces = await ok<{ data: Array<{ id: string; name: string }> }>(
    t.get(`/v2/projects/${project.id}/spaces`, { token: users.owner.token }),
    200,
  );
  const space = spaces.data.find((s) => s.name === 'default')!;
  const doomed = await freshToken(t, users.owner);
  await ok(t.post('/v2/auth/logout', { token: doomed.token }), 204);
  return { t, users, host, revokedToken: doomed.token, team, project, space, grantId };
}

// Fresh targets, for calls that use their target up.

export async function freshToken(t: TestApp, user: TestUser) {
  return ok<{ id: string; token: string }>(
    t.post('/v2/user/tokens', { token: user.token, body: { name: `tok-${unique()}` } }),
    201,
  );
}

/** A new team owned by the world's owner, with the same admin, member and viewer. */
export async function freshTeam(w: World) {
  const team = await newTeam(w.t, w.users.owner, `Fresh ${unique()}`);
  await addMember(w.t, team.id, w.users.admin, 'admin');
  await addMember(w.t, team.id, w.users.member, 'member');
  await addMember(w.t, team.id, w.users.viewer, 'viewer');
  return team;
}

/** A new project of `owner` (default: the world's owner), shared with the world's team at `role` if given. */
export async function freshProject(
  w: World,
  opts: { owner?: TestUser; shareRole?: 'viewer' | 'member' | 'admin' } = {},
) {
  const project = await newProject(w.t, opts.owner ?? w.users.owner, `P ${unique()}`);
  const grantId = opts.shareRole
    ? await share(w.t, w.team.id, project.id, opts.shareRole)
    : undefined;
  return { project, grantId };
}

export async function freshSpace(w: World) {
  return ok<{ id: string }>(
    w.t.post(`/v2/projects/${w.project.id}/spaces`, {
      token: w.users.owner.token,
      body: { name: `s-${unique()}` },
    }),
    201,
  );
}

/** A pending invitation of the world's team to a new address. */
export async function freshInvitation(w: World) {
  return ok<{ id: string; email: string }>(
    w.t.post(`/v2/teams/${w.team.id}/invitations`, {
      token: w.users.owner.token,
      body: { email: `invitee-${unique()}@example.test`, role: 'member' },
    }),
    201,
  );
}

/** A new user who is a viewer of the world's team. */
export async function freshMember(w: World) {
  const u = await newUser(w.t, 'target');
  await addMember(w.t, w.team.id, u, 'viewer');
  return u;
}

/** The token of a new invitation, from a new team of the host, addressed to `email`. */
export async function invitationTo(w: World, email: string) {
  const team = await newTeam(w.t, w.host, `Host ${unique()}`);
  await ok(
    w.t.post(`/v2/teams/${team.id}/invitations`, {
      token: w.host.token,
      body: { email, role: 'member' },
    }),
    201,
  );
  return invitationToken(w.t, email);
}

const someoneElse = () => `someone-${unique()}@example.test`;

/** An invitation's id, to `email` from a fresh team of the host; the address is made proven
 *  (the only kind of account that answers by id). */
async function invitationIdTo(w: World, email: string) {
  const team = await newTeam(w.t, w.host, `Host ${unique()}`);
  const inv = await ok(
    w.t.post(`/v2/teams/${team.id}/invitations`, {
      token: w.host.token,
      body: { email, role: 'member' },
    }),
    201,
  );
  const now = w.t.clock.now();
  await w.t.db
    .updateTable('users')
    .set({ email_verified_at: now })
    .where('email', '=', email)
    .execute();
  return inv.id as string;
}

/** Both answers by id: to the caller's own proven address, and to someone else's (404). */
const answersById = (['accept', 'decline'] as const).flatMap((answer): Endpoint[] => [
  {
    method: 'POST',
    route: `/v2/user/invitations/{invitation_id}/${answer}`,
    variant: 'addressed to the caller',
    expect: signedIn(204),
    prepare: async (w, c) => ({
      path: `/v2/user/invitations/${await invitationIdTo(w, personOf(w, c).email)}/${answer}`,
    }),
  },
  {
    method: 'POST',
    route: `/v2/user/invitations/{invitation_id}/${answer}`,
    variant: 'addressed to someone else',
    expect: signedIn(404),
    prepare: async (w) => ({
      path: `/v2/user/invitations/${await invitationIdTo(w, someoneElse())}/${answer}`,
    }),
  },
]);

export const ENDPOINTS: Endpoint[] = [
  // Identity (CONTRACT 2).
  {
    method: 'POST',
    route: '/v2/auth/signup',
    auth: 'none',
    expect: { owner: 201, admin: 201, member: 201, viewer: 201, outsider: 201, anonymous: 201 },
    prepare: async () => ({
      path: '/v2/auth/signup',
      body: { email: `new-${unique()}@example.test`, password: 'long-enough-password' },
    }),
  },
  {
    method: 'POST',
    route: '/v2/auth/login',
    auth: 'none',
    expect: { owner: 200, admin: 200, member: 200, viewer: 200, outsider: 200, anonymous: 200 },
    prepare: async (w, c) => ({
      path: '/v2/auth/login',
      body: { email: personOf(w, c).email, password: FACTORY_PASSWORD },
    }),
  },
  {
    method: 'POST',
    route: '/v2/auth/logout',
    expect: signedIn(204),
    // Logout revokes the token used: each signed-in call uses a token of its own.
    prepare: async (w, c) => ({
      path: '/v2/auth/logout',
      token:
        c === 'anonymous' || c === 'revoked'
          ? undefined
          : (await freshToken(w.t, personOf(w, c))).token,
    }),
  },
  {
    method: 'POST',
    route: '/v2/auth/verify-email',
    auth: 'none',
    expect: { owner: 200, admin: 200, member: 200, viewer: 200, outsider: 200, anonymous: 200 },
    // The link's token and the account's password suffice, whoever calls: a fresh link each time.
    prepare: async (w) => ({
      path: '/v2/auth/verify-email',
      body: { token: await verificationLink(w.t), password: FACTORY_PASSWORD },
    }),
  },
  {
    method: 'POST',
    route: '/v2/user/verification-email',
    expect: signedIn(202),
    // The world's people never proved their addresses (factory accounts): each gets a link.
    prepare: async () => ({ path: '/v2/user/verification-email' }),
  },
  {
    method: 'GET',
    route: '/v2/user',
    expect: signedIn(200),
    prepare: async () => ({ path: '/v2/user' }),
  },
  {
    method: 'GET',
    route: '/v2/user/invitations',
    expect: signedIn(200),
    prepare: async () => ({ path: '/v2/user/invitations' }),
  },
  ...answersById,
  {
    method: 'POST',
    route: '/v2/user/tokens',
    expect: signedIn(201),
    prepare: async () => ({
      path: '/v2/user/tokens',
      body: { name: `cli-${unique()}`, expires_in_days: 30 },
    }),
  },
  {
    method: 'GET',
    route: '/v2/user/tokens',
    expect: signedIn(200),
    prepare: async () => ({ path: '/v2/user/tokens' }),
  },
  {
    method: 'DELETE',
    route: '/v2/user/tokens/{token_id}',
    variant: "the caller's own token",
    expect: signedIn(204),
    prepare: async (w, c) => ({
      path: `/v2/user/tokens/${(await freshToken(w.t, personOf(w, c))).id}`,
    }),
  },
  {
    method: 'DELETE',
    route: '/v2/user/tokens/{token_id}',
    variant: "another user's token",
    expect: signedIn(404),
    prepare: async (w) => ({ path: `/v2/user/tokens/${(await freshToken(w.t, w.host)).id}` }),
  },

  // Projects and spaces (CONTRACT 3): team role = effective role through the admin grant.
  {
    method: 'POST',
    route: '/v2/projects',
    expect: signedIn(201),
    prepare: async () => ({ path: '/v2/projects', body: { name: `p-${unique()}` } }),
  },
  {
    method: 'GET',
    route: '/v2/projects',
    expect: signedIn(200),
    prepare: async () => ({ path: '/v2/projects' }),
  },
  {
    method: 'GET',
    route: '/v2/projects/{project_id}',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/projects/${w.project.id}` }),
  },
  {
    method: 'PATCH',
    route: '/v2/projects/{project_id}',
    expect: minRole('admin', 200),
    prepare: async (w) => ({
      path: `/v2/projects/${w.project.id}`,
      body: { name: `World project ${unique()}` },
    }),
  },
  {
    method: 'DELETE',
    route: '/v2/projects/{project_id}',
    expect: minRole('owner', 204),
    prepare: async (w) => ({
      path: `/v2/projects/${(await freshProject(w, { shareRole: 'admin' })).project.id}`,
    }),
  },
  {
    method: 'GET',
    route: '/v2/projects/{project_id}/access',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/projects/${w.project.id}/access` }),
  },
  // The project's audit log (docs/api.md): admin, like the team's.
  {
    method: 'GET',
    route: '/v2/projects/{project_id}/audit',
    expect: minRole('admin', 200),
    prepare: async (w) => ({ path: `/v2/projects/${w.project.id}/audit` }),
  },
  // The events of every frame of the project (docs/api.md): whoever reads the project.
  {
    method: 'GET',
    route: '/v2/projects/{project_id}/events',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/projects/${w.project.id}/events` }),
  },
  {
    method: 'GET',
    route: '/v2/projects/{project_id}/spaces',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/projects/${w.project.id}/spaces` }),
  },
  {
    method: 'POST',
    route: '/v2/projects/{project_id}/spaces',
    expect: minRole('admin', 201),
    prepare: async (w) => ({
      path: `/v2/projects/${w.project.id}/spaces`,
      body: { name: `s-${unique()}` },
    }),
  },
  {
    method: 'GET',
    route: '/v2/projects/{project_id}/spaces/{space_id}',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/projects/${w.project.id}/spaces/${w.space.id}` }),
  },
  {
    method: 'PATCH',
    route: '/v2/projects/{project_id}/spaces/{space_id}',
    expect: minRole('admin', 200),
    prepare: async (w) => ({
      path: `/v2/projects/${w.project.id}/spaces/${(await freshSpace(w)).id}`,
      body: { name: `s-${unique()}` },
    }),
  },
  {
    method: 'DELETE',
    route: '/v2/projects/{project_id}/spaces/{space_id}',
    expect: minRole('admin', 204),
    prepare: async (w) => ({
      path: `/v2/projects/${w.project.id}/spaces/${(await freshSpace(w)).id}`,
    }),
  },

  // Teams (spec 4).
  {
    method: 'GET',
    route: '/v2/teams',
    expect: signedIn(200),
    prepare: async () => ({ path: '/v2/teams' }),
  },
  {
    method: 'POST',
    route: '/v2/teams',
    expect: signedIn(201),
    prepare: async () => ({ path: '/v2/teams', body: { name: 'New team', slug: `n-${unique()}` } }),
  },
  {
    method: 'GET',
    route: '/v2/teams/{team_id}',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}` }),
  },
  {
    method: 'PATCH',
    route: '/v2/teams/{team_id}',
    expect: minRole('admin', 200),
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}`, body: { name: `World ${unique()}` } }),
  },
  {
    method: 'DELETE',
    route: '/v2/teams/{team_id}',
    expect: minRole('owner', 204),
    prepare: async (w) => ({ path: `/v2/teams/${(await freshTeam(w)).id}` }),
  },
  {
    method: 'POST',
    route: '/v2/teams/{team_id}/leave',
    // Any member but the owner (CONTRACT 4); the owner is refused by the guardrail.
    expect: { owner: 403, admin: 204, member: 204, viewer: 204, outsider: 404, anonymous: 401 },
    prepare: async (w) => ({ path: `/v2/teams/${(await freshTeam(w)).id}/leave` }),
  },
  {
    method: 'GET',
    route: '/v2/teams/{team_id}/members',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}/members` }),
  },
  {
    method: 'PATCH',
    route: '/v2/teams/{team_id}/members/{user_id}',
    variant: 'a viewer to member',
    expect: minRole('admin', 200),
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/members/${(await freshMember(w)).id}`,
      body: { role: 'member' },
    }),
  },
  {
    method: 'PATCH',
    route: '/v2/teams/{team_id}/members/{user_id}',
    variant: "the owner's role (guardrail)",
    expect: { owner: 403, admin: 403, member: 403, viewer: 403, outsider: 404, anonymous: 401 },
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/members/${w.users.owner.id}`,
      body: { role: 'admin' },
    }),
  },
  {
    method: 'DELETE',
    route: '/v2/teams/{team_id}/members/{user_id}',
    variant: 'a viewer',
    expect: minRole('admin', 204),
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}/members/${(await freshMember(w)).id}` }),
  },
  {
    method: 'DELETE',
    route: '/v2/teams/{team_id}/members/{user_id}',
    variant: 'the owner (guardrail)',
    expect: { owner: 403, admin: 403, member: 403, viewer: 403, outsider: 404, anonymous: 401 },
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}/members/${w.users.owner.id}` }),
  },
  {
    method: 'GET',
    route: '/v2/teams/{team_id}/invitations',
    expect: minRole('admin', 200),
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}/invitations` }),
  },
  {
    method: 'POST',
    route: '/v2/teams/{team_id}/invitations',
    expect: minRole('admin', 201),
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/invitations`,
      body: { email: `invitee-${unique()}@example.test`, role: 'viewer' },
    }),
  },
  {
    method: 'DELETE',
    route: '/v2/teams/{team_id}/invitations/{invitation_id}',
    expect: minRole('admin', 204),
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/invitations/${(await freshInvitation(w)).id}`,
    }),
  },
  {
    method: 'POST',
    route: '/v2/teams/{team_id}/invitations/{invitation_id}/resend',
    expect: minRole('admin', 200),
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/invitations/${(await freshInvitation(w)).id}/resend`,
    }),
  },
  {
    method: 'POST',
    route: '/v2/teams/invitations/{token}/accept',
    variant: 'addressed to the caller',
    expect: signedIn(200),
    prepare: async (w, c) => ({
      path: `/v2/teams/invitations/${await invitationTo(w, c === 'anonymous' || c === 'revoked' ? someoneElse() : personOf(w, c).email)}/accept`,
    }),
  },
  {
    method: 'POST',
    route: '/v2/teams/invitations/{token}/accept',
    variant: 'addressed to someone else',
    expect: signedIn(403),
    prepare: async (w) => ({
      path: `/v2/teams/invitations/${await invitationTo(w, someoneElse())}/accept`,
    }),
  },
  {
    // Decline is the one team endpoint that works without signing in: the token from the e-mail
    // is proof enough (like an unsubscribe link); a token that is sent must be valid and match.
    method: 'POST',
    route: '/v2/teams/invitations/{token}/decline',
    variant: 'addressed to the caller',
    auth: 'optional',
    expect: { owner: 204, admin: 204, member: 204, viewer: 204, outsider: 204, anonymous: 204 },
    prepare: async (w, c) => ({
      path: `/v2/teams/invitations/${await invitationTo(w, c === 'anonymous' || c === 'revoked' ? someoneElse() : personOf(w, c).email)}/decline`,
    }),
  },
  {
    method: 'POST',
    route: '/v2/teams/invitations/{token}/decline',
    variant: 'addressed to someone else',
    auth: 'optional',
    expect: { owner: 403, admin: 403, member: 403, viewer: 403, outsider: 403, anonymous: 204 },
    prepare: async (w) => ({
      path: `/v2/teams/invitations/${await invitationTo(w, someoneElse())}/decline`,
    }),
  },
  {
    method: 'GET',
    route: '/v2/teams/{team_id}/grants',
    expect: minRole('viewer', 200),
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}/grants` }),
  },
  {
    // Team admin and owner of the project (spec 4): each caller shares a project of their own.
    method: 'POST',
    route: '/v2/teams/{team_id}/grants',
    variant: 'a project the caller owns',
    expect: { owner: 201, admin: 201, member: 403, viewer: 403, outsider: 404, anonymous: 401 },
    prepare: async (w, c) => ({
      path: `/v2/teams/${w.team.id}/grants`,
      body: {
        project_id: (await freshProject(w, { owner: personOf(w, c) })).project.id,
        role: 'member',
      },
    }),
  },
  {
    // The world's project, into a second team of the same people: the admin reaches the
    // project as admin, but only its owner may share it.
    method: 'POST',
    route: '/v2/teams/{team_id}/grants',
    variant: 'a project the caller reaches but does not own',
    expect: { owner: 201, admin: 403, member: 403, viewer: 403, outsider: 404, anonymous: 401 },
    prepare: async (w) => ({
      path: `/v2/teams/${(await freshTeam(w)).id}/grants`,
      body: { project_id: w.project.id, role: 'viewer' },
    }),
  },
  {
    method: 'PATCH',
    route: '/v2/teams/{team_id}/grants/{grant_id}',
    variant: 'lowering a grant',
    expect: minRole('admin', 200),
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/grants/${(await freshProject(w, { shareRole: 'member' })).grantId}`,
      body: { role: 'viewer' },
    }),
  },
  {
    // Raising a grant widens access: that needs the project owner, like creating one.
    method: 'PATCH',
    route: '/v2/teams/{team_id}/grants/{grant_id}',
    variant: 'raising a grant',
    expect: { owner: 200, admin: 403, member: 403, viewer: 403, outsider: 404, anonymous: 401 },
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/grants/${(await freshProject(w, { shareRole: 'viewer' })).grantId}`,
      body: { role: 'admin' },
    }),
  },
  {
    method: 'DELETE',
    route: '/v2/teams/{team_id}/grants/{grant_id}',
    expect: minRole('admin', 204),
    prepare: async (w) => ({
      path: `/v2/teams/${w.team.id}/grants/${(await freshProject(w, { shareRole: 'member' })).grantId}`,
    }),
  },
  {
    method: 'GET',
    route: '/v2/teams/{team_id}/audit',
    expect: minRole('admin', 200),
    prepare: async (w) => ({ path: `/v2/teams/${w.team.id}/audit` }),
  },
  ...notificationEndpoints(),
];

// Notification endpoints (docs/api.md, Notifications): every route is the project's admins'.
// The world's app runs no job worker, so the deliveries made here are never sent.
const notificationBody = { url: 'https://hooks.example.com/matrix', events: ['deploy.failed'] };

async function freshEndpoint(w: World) {
  return ok<{ id: string }>(
    w.t.post(`/v2/projects/${w.project.id}/notifications`, {
      token: w.users.owner.token,
      body: notificationBody,
    }),
    201,
  );
}

/** One endpoint and one delivery of it per world, for the calls that do not use them up. */
const sharedEndpoints = new WeakMap<World, Promise<{ path: string; delivery: string }>>();
function sharedEndpoint(w: World) {
  let found = sharedEndpoints.get(w);
  if (!found) {
    found = (async () => {
      const path = `/v2/projects/${w.project.id}/notifications/${(await freshEndpoint(w)).id}`;
      const ping = await ok<{ id: string }>(
        w.t.post(`${path}/test`, { token: w.users.owner.token }),
        202,
      );
      return { path, delivery: `${path}/deliveries/${ping.id}` };
    })();
    sharedEndpoints.set(w, found);
  }
  return found;
}

function notificationEndpoints(): Endpoint[] {
  const base = '/v2/projects/{project_id}/notifications';
  const one = `${base}/{endpoint_id}`;
  const delivery = `${one}/deliveries/{delivery_id}`;
  const shared =
    (suffix = '') =>
    async (w: World) => ({
      path: `${(await sharedEndpoint(w)).path}${suffix}`,
    });
  return [
    {
      method: 'POST',
      route: base,
      expect: minRole('admin', 201),
      prepare: async (w) => ({
        path: `/v2/projects/${w.project.id}/notifications`,
        body: notificationBody,
      }),
    },
    {
      method: 'GET',
      route: base,
      expect: minRole('admin', 200),
      prepare: async (w) => ({ path: `/v2/projects/${w.project.id}/notifications` }),
    },
    { method: 'GET', route: one, expect: minRole('admin', 200), prepare: shared() },
    {
      method: 'PATCH',
      route: one,
      expect: minRole('admin', 200),
      prepare: async (w) => ({ ...(await shared()(w)), body: { format: 'slack' } }),
    },
    {
      method: 'DELETE',
      route: one,
      expect: minRole('admin', 204),
      prepare: async (w) => ({
        path: `/v2/projects/${w.project.id}/notifications/${(await freshEndpoint(w)).id}`,
      }),
    },
    {
      method: 'POST',
      route: `${one}/secret`,
      expect: minRole('admin', 200),
      prepare: shared('/secret'),
    },
    {
      method: 'POST',
      route: `${one}/test`,
      expect: minRole('admin', 202),
      prepare: shared('/test'),
    },
    {
      method: 'GET',
      route: `${one}/deliveries`,
      expect: minRole('admin', 200),
      prepare: shared('/deliveries'),
    },
    {
      method: 'GET',
      route: delivery,
      expect: minRole('admin', 200),
      prepare: async (w) => ({ path: (await sharedEndpoint(w)).delivery }),
    },
    {
      method: 'POST',
      route: `${delivery}/redeliver`,
      expect: minRole('admin', 202),
      prepare: async (w) => ({ path: `${(await sharedEndpoint(w)).delivery}/redeliver` }),
    },
  ];
}

/** OpenAPI paths of the area this catalogue must cover completely. */
export function inMatrixArea(route: string): boolean {
  if (/^\/v2\/(teams|user|auth)(\/|$)/.test(route)) return true;
  // The project area, without the frame runtime's sub-resources (their own matrix covers them).
  return /^\/v2\/projects(\/|$)/.test(route) && !/\/(frames|agents|webhook)(\/|$)/.test(route);
}
