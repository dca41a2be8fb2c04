// The authorization matrix of the team, identity and project area: every endpoint of
// test/helpers/endpoints.ts called as owner, admin, member, viewer, outsider, anonymous and with
// a revoked token, one test per cell. Rules (CONTRACT 1, 3, 4; spec 3, 4, 7): too low a role on a
// visible resource is 403; a team or project the caller cannot reach is 404, never 403; no
// valid token is 401 with `WWW-Authenticate: Bearer`; every error is application/problem+json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type Reply, type TestApp } from './helpers/app.ts';
import {
  buildWorld,
  CALLERS,
  ENDPOINTS,
  expectedFor,
  inMatrixArea,
  tokenOf,
  type World,
} from './helpers/endpoints.ts';
import { at } from './helpers/checked.ts';
import { checkAnswers } from './helpers/openapi-conformance.ts';

let t: TestApp;
let w: World;
let answers: Awaited<ReturnType<typeof checkAnswers>>;
beforeAll(async () => {
  t = await testApp();
  answers = await checkAnswers(t);
  w = await buildWorld(t);
});
afterAll(async () => {
  await t?.close();
});

function expectWellFormed(r: Reply, status: number, label: string) {
  expect(r.status, `${label}: ${r.text}`).toBe(status);
  if (status >= 400) {
    expect(String(r.headers['content-type']), label).toMatch(/^application\/problem\+json/);
    expect(r.json?.status, label).toBe(status);
    expect(r.json?.code, label).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(r.text, `${label}: no internals in an error`).not.toMatch(
      /\bat .+\.ts:\d+|stack|SELECT |INSERT /i,
    );
  }
  if (status === 401) expect(String(r.headers['www-authenticate']), label).toMatch(/^Bearer\b/);
  if (status === 403)
    expect(r.json.code, label).toMatch(/^(insufficient_role|owner_immutable|email_mismatch)$/);
  if (status === 404) expect(r.json.code, label).toMatch(/_not_found$/);
}

const label = (e: (typeof ENDPOINTS)[number]) =>
  `${e.method} ${e.route}${e.variant ? ` (${e.variant})` : ''}`;

describe('authorization matrix', () => {
  for (const e of ENDPOINTS) {
    describe(label(e), () => {
      for (const caller of CALLERS) {
        const status = expectedFor(e, caller);
        it(`${caller} → ${status}`, async () => {
          const p = await e.prepare(w, caller);
          const token = p.token === null ? undefined : (p.token ?? tokenOf(w, caller));
          const r = await t.request(e.method, p.path, { token, body: p.body });
          expectWellFormed(r, status, `${caller} ${e.method} ${p.path}`);
        });
      }
    });
  }
});

describe('the matrix is complete and consistent', () => {
  it('covers every route of the area in the OpenAPI document', async () => {
    const doc = await t.get('/v2/openapi.json');
    expect(doc.status).toBe(200);
    const routes = Object.entries<Record<string, unknown>>(doc.json.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    const inArea = routes.filter((r) => inMatrixArea(at(r.split(' '), 1)));
    const covered = new Set(ENDPOINTS.map((e) => `${e.method} ${e.route}`));
    expect(
      inArea.filter((r) => !covered.has(r)),
      'routes missing from test/helpers/endpoints.ts',
    ).toEqual([]);
    expect(
      [...covered].filter((r) => !routes.includes(r)),
      'catalogue rows whose route does not exist',
    ).toEqual([]);
  });

  it('the world really gives the team roles as effective project roles', async () => {
    for (const role of ['admin', 'member', 'viewer'] as const) {
      const r = await t.get(`/v2/projects/${w.project.id}`, { token: w.users[role].token });
      expect(r.json.role).toBe(role);
    }
    expect(
      (await t.get(`/v2/projects/${w.project.id}`, { token: w.users.owner.token })).json.role,
    ).toBe('owner');
  });

  it('refused calls changed nothing: the world team and project are intact', async () => {
    const team = await t.get(`/v2/teams/${w.team.id}`, { token: w.users.owner.token });
    expect(team.status).toBe(200);
    const members = await t.get(`/v2/teams/${w.team.id}/members?limit=200`, {
      token: w.users.owner.token,
    });
    const roles = Object.fromEntries(members.json.data.map((m: any) => [m.user_id, m.role]));
    expect(roles[w.users.owner.id]).toBe('owner');
    expect(roles[w.users.admin.id]).toBe('admin');
    expect(roles[w.users.member.id]).toBe('member');
    expect(roles[w.users.viewer.id]).toBe('viewer');
    expect(roles[w.users.outsider.id]).toBeUndefined();
    expect(
      (
        await t.get(`/v2/projects/${w.project.id}/spaces/${w.space.id}`, {
          token: w.users.viewer.token,
        })
      ).status,
    ).toBe(200);
    const grants = await t.get(`/v2/teams/${w.team.id}/grants?limit=200`, {
      token: w.users.owner.token,
    });
    expect(grants.json.data.find((g: any) => g.id === w.grantId)).toMatchObject({
      project_id: w.project.id,
      role: 'admin',
    });
  });
});

describe('the OpenAPI document', () => {
  it('declares every answer above: status, content type and body (runs last)', () => {
    expect(answers.violations).toEqual([]);
    expect(answers.checked).toBeGreaterThan(0);
  });
});
