// The authorization matrix of every org route (CONTRACT 1, 3a): owner, admin, member, outsider,
// no token and a revoked token. Too low a role on an org the caller is in is 403; an org the
// caller is not in is 404, never 403; no valid token is 401. Each cell gets its own world, so
// a cell that changes or uses up something cannot decide another's answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { checkAnswers } from '../helpers/openapi-conformance.ts';
import { invitationToken, newUser, type TestUser } from '../helpers/factories.ts';
import { addOrgMember, newOrg, type TestOrg } from '../helpers/orgs.ts';

let t: TestApp;
let answers: Awaited<ReturnType<typeof checkAnswers>>;
beforeAll(async () => {
  t = await testApp();
  answers = await checkAnswers(t);
});
afterAll(async () => {
  await t?.close();
});

const CALLERS = ['owner', 'admin', 'member', 'outsider', 'anonymous', 'revoked'] as const;
type Caller = (typeof CALLERS)[number];
type Person = 'owner' | 'admin' | 'member' | 'outsider';

interface World {
  org: TestOrg;
  users: Record<Person, TestUser>;
  /** A member of the org (role member) that changes and removals aim at. */
  target: TestUser;
}

async function world(): Promise<World> {
  const [owner, admin, member, outsider, target] = await Promise.all(
    ['owner', 'admin', 'member', 'outsider', 'target'].map((n) => newUser(t, n)),
  );
  if (!owner || !admin || !member || !outsider || !target) throw new Error('no users');
  const org = await newOrg(t, owner);
  await addOrgMember(t, org.id, admin, 'admin');
  await addOrgMember(t, org.id, member, 'member');
  await addOrgMember(t, org.id, target, 'member');
  return { org, users: { owner, admin, member, outsider }, target };
}

async function invite(w: World, email: string) {
  const r = await t.post(`/v2/orgs/${w.org.id}/invitations`, {
    token: w.users.owner.token,
    body: { email, role: 'member' },
  });
  expect(r.status, r.text).toBe(201);
  return { id: r.json.id as string, token: await invitationToken(t, email) };
}

interface Call {
  path: string;
  body?: unknown;
}
interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  route: string;
  variant?: string;
  prepare: (w: World, caller: Caller) => Promise<Call>;
  /** The status for owner, admin, member and outsider; no token and a revoked one are 401. */
  expect: Record<Person, number>;
  /** The answer without a token, where it is not 401. */
  anonymous?: number;
}

const me = (w: World, c: Caller) => (c in w.users ? w.users[c as Person] : w.users.outsider);

const ROUTES: Route[] = [
  {
    method: 'GET',
    route: '/v2/orgs',
    prepare: async () => ({ path: '/v2/orgs' }),
    expect: { owner: 200, admin: 200, member: 200, outsider: 200 },
  },
  {
    method: 'POST',
    route: '/v2/orgs',
    prepare: async () => ({
      path: '/v2/orgs',
      body: { name: 'New', slug: `new-${Math.random().toString(36).slice(2, 10)}` },
    }),
    expect: { owner: 201, admin: 201, member: 201, outsider: 201 },
  },
  {
    method: 'GET',
    route: '/v2/orgs/{org_id}',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}` }),
    expect: { owner: 200, admin: 200, member: 200, outsider: 404 },
  },
  {
    method: 'PATCH',
    route: '/v2/orgs/{org_id}',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}`, body: { base_role: 'member' } }),
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 },
  },
  {
    method: 'DELETE',
    route: '/v2/orgs/{org_id}',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}` }),
    expect: { owner: 204, admin: 403, member: 403, outsider: 404 },
  },
  {
    method: 'POST',
    route: '/v2/orgs/{org_id}/leave',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}/leave` }),
    expect: { owner: 403, admin: 204, member: 204, outsider: 404 },
  },
  {
    method: 'GET',
    route: '/v2/orgs/{org_id}/members',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}/members` }),
    expect: { owner: 200, admin: 200, member: 200, outsider: 404 },
  },
  {
    method: 'PATCH',
    route: '/v2/orgs/{org_id}/members/{user_id}',
    prepare: async (w) => ({
      path: `/v2/orgs/${w.org.id}/members/${w.target.id}`,
      body: { role: 'admin' },
    }),
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 },
  },
  {
    method: 'PATCH',
    route: '/v2/orgs/{org_id}/members/{user_id}',
    variant: 'the owner',
    prepare: async (w) => ({
      path: `/v2/orgs/${w.org.id}/members/${w.users.owner.id}`,
      body: { role: 'admin' },
    }),
    expect: { owner: 403, admin: 403, member: 403, outsider: 404 },
  },
  {
    method: 'DELETE',
    route: '/v2/orgs/{org_id}/members/{user_id}',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}/members/${w.target.id}` }),
    expect: { owner: 204, admin: 204, member: 403, outsider: 404 },
  },
  {
    method: 'GET',
    route: '/v2/orgs/{org_id}/audit',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}/audit` }),
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 },
  },
  {
    method: 'GET',
    route: '/v2/orgs/{org_id}/invitations',
    prepare: async (w) => ({ path: `/v2/orgs/${w.org.id}/invitations` }),
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 },
  },
  {
    method: 'POST',
    route: '/v2/orgs/{org_id}/invitations',
    prepare: async (w) => ({
      path: `/v2/orgs/${w.org.id}/invitations`,
      body: {
        email: `new-${Math.random().toString(36).slice(2, 10)}@example.test`,
        role: 'member',
      },
    }),
    expect: { owner: 201, admin: 201, member: 403, outsider: 404 },
  },
  {
    method: 'DELETE',
    route: '/v2/orgs/{org_id}/invitations/{invitation_id}',
    prepare: async (w) => {
      const inv = await invite(w, `x-${Math.random().toString(36).slice(2, 10)}@example.test`);
      return { path: `/v2/orgs/${w.org.id}/invitations/${inv.id}` };
    },
    expect: { owner: 204, admin: 204, member: 403, outsider: 404 },
  },
  {
    method: 'POST',
    route: '/v2/orgs/{org_id}/invitations/{invitation_id}/resend',
    prepare: async (w) => {
      const inv = await invite(w, `x-${Math.random().toString(36).slice(2, 10)}@example.test`);
      return { path: `/v2/orgs/${w.org.id}/invitations/${inv.id}/resend` };
    },
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 },
  },
  {
    // Addressed to the caller, in an org the caller is not in yet (the world's members are).
    method: 'POST',
    route: '/v2/orgs/invitations/{token}/accept',
    prepare: async (w, caller) => {
      const host = await newUser(t, 'host');
      const org = await newOrg(t, host);
      const other = { ...w, org, users: { ...w.users, owner: host } };
      return {
        path: `/v2/orgs/invitations/${(await invite(other, me(w, caller).email)).token}/accept`,
      };
    },
    expect: { owner: 200, admin: 200, member: 200, outsider: 200 },
  },
  {
    method: 'POST',
    route: '/v2/orgs/invitations/{token}/accept',
    variant: 'addressed to someone else',
    prepare: async (w) => {
      const inv = await invite(w, `x-${Math.random().toString(36).slice(2, 10)}@example.test`);
      return { path: `/v2/orgs/invitations/${inv.token}/accept` };
    },
    expect: { owner: 403, admin: 403, member: 403, outsider: 403 },
  },
  {
    // The token suffices, like an unsubscribe link; a signed-in caller must be the invitee.
    method: 'POST',
    route: '/v2/orgs/invitations/{token}/decline',
    prepare: async (w) => {
      const inv = await invite(w, w.users.outsider.email);
      return { path: `/v2/orgs/invitations/${inv.token}/decline` };
    },
    expect: { owner: 403, admin: 403, member: 403, outsider: 204 },
    anonymous: 204,
  },
];

async function tokenFor(w: World, caller: Caller) {
  if (caller === 'anonymous') return undefined;
  if (caller !== 'revoked') return w.users[caller].token;
  const u = await newUser(t, 'revoked');
  await addOrgMember(t, w.org.id, u, 'admin');
  expect((await t.post('/v2/auth/logout', { token: u.token })).status).toBe(204);
  return u.token;
}

const expected = (r: Route, c: Caller) =>
  c === 'anonymous' ? (r.anonymous ?? 401) : c === 'revoked' ? 401 : r.expect[c];

describe('org authorization matrix', () => {
  for (const r of ROUTES) {
    describe(`${r.method} ${r.route}${r.variant ? ` (${r.variant})` : ''}`, () => {
      for (const caller of CALLERS) {
        const status = expected(r, caller);
        it(`${caller} → ${status}`, async () => {
          const w = await world();
          const call = await r.prepare(w, caller);
          const token = await tokenFor(w, caller);
          const res = await t.request(r.method, call.path, { token, body: call.body });
          expect(res.status, `${caller} ${r.method} ${call.path}: ${res.text}`).toBe(status);
          if (status >= 400) {
            expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
            if (status === 404) expect(res.json.code).toMatch(/_not_found$/);
            if (status === 403)
              expect(res.json.code).toMatch(/^(insufficient_role|owner_immutable|email_mismatch)$/);
            if (status === 401) expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer/);
          }
        });
      }
    });
  }

  it('covers every /v2/orgs route of the OpenAPI document', async () => {
    const doc = await t.get('/v2/openapi.json');
    const routes = Object.entries<Record<string, unknown>>(doc.json.paths)
      .filter(([path]) => path.startsWith('/v2/orgs'))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const covered = new Set(ROUTES.map((r) => `${r.method} ${r.route}`));
    expect(routes.filter((r) => !covered.has(r))).toEqual([]);
    expect([...covered].filter((r) => !routes.includes(r))).toEqual([]);
  });
});

describe('the OpenAPI document', () => {
  it('declares every answer above: status, content type and body (runs last)', () => {
    expect(answers.violations).toEqual([]);
    expect(answers.checked).toBeGreaterThan(0);
  });
});
