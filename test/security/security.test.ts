// Security properties, in-process against a real database:
// - credentials that must not work are refused: another user's token (on the first user's
//   things), a revoked token, an expired one (also while cached, when the clock passes its
//   expiry), a logged-out session, an agent token on user routes, a user token on agent and
//   operator routes;
// - no answer tells an outsider whether an unreachable project, team or frame (or anything
//   under one) exists: for every route of the OpenAPI document, the answer for an existing but
//   unreachable id and for a well-formed id that names nothing are byte-identical;
// - security headers on every kind of answer (JSON, problem, HTML, the API reference);
// - no stack trace or source path in any error answer.
import { afterAll, describe, expect, it } from 'vitest';
import { testApp, type Reply } from '../helpers/app.ts';
import { checkAnswers } from '../helpers/openapi-conformance.ts';
import { expectProblem, FACTORY_PASSWORD } from '../helpers/factories.ts';
import {
  ADMIN,
  buildWorld,
  fill,
  missingId,
  PARAM_PREFIX,
  routesOf,
  type Route,
  type Schema,
} from '../helpers/world.ts';
import { report } from '../faults/helpers/service.ts';

const t = await testApp();
afterAll(async () => {
  await t.close();
});
const answers = await checkAnswers(t);
const world = await buildWorld(t);
const ROUTES = routesOf((await t.get('/v2/openapi.json')).json);
const STACK =
  /\n\s+at\s|\bat\s+\S+\s+\(?[^\s)]*:\d+:\d+\)?|\/src\/|node_modules|file:\/\/|\.ts:\d+/;

function expectRefused(r: Reply, status: number, what: string) {
  expect(r.status, `${what}: ${r.text}`).toBe(status);
  expectProblem(r, status);
  if (status === 401) expect(r.headers['www-authenticate'], what).toBe('Bearer');
  expect(r.text, what).not.toMatch(STACK);
}

describe('credentials that must not work are refused', () => {
  const userRoutes = () =>
    [
      ['GET', '/v2/user'],
      ['GET', '/v2/projects'],
      ['GET', world.paths.project],
      ['GET', world.paths.frame],
      ['POST', '/v2/projects', { name: 'never' }],
      ['POST', `${world.paths.frame}/stop`],
      ['DELETE', `/v2/user/tokens/${world.ids.token_id}`],
    ] as Array<[string, string, unknown?]>;

  it("another user's token reaches none of the first user's things (404, nothing changes)", async () => {
    for (const [method, path, body] of userRoutes().filter(
      ([, p]) => p !== '/v2/user' && p !== '/v2/projects',
    )) {
      const r = await t.request(method, path, { token: world.outsider.token, body });
      expectRefused(r, 404, `${method} ${path}`);
    }
    // The owner's token the outsider tried to delete still works; the frame was not stopped.
    expect((await t.get('/v2/user', { token: world.owner.token })).status).toBe(200);
    expect((await t.get(world.paths.frame, { token: world.owner.token })).json.desired_state).toBe(
      'running',
    );
  });

  for (const [name, token] of [
    ['a revoked token', () => world.tokens.revoked],
    ['an expired token', () => world.tokens.expired],
    ['an agent token', () => world.tokens.agent],
    ['the operator token', () => world.tokens.admin],
    ['a made-up token of the right shape', () => `fp_${'A'.repeat(43)}`],
  ] as const) {
    it(`${name} is refused on user routes (401)`, async () => {
      for (const [method, path, body] of userRoutes())
        expectRefused(
          await t.request(method, path, { token: token(), body }),
          401,
          `${method} ${path}`,
        );
    });
  }

  it('a user token, the operator token and junk are refused on the agent route; a user or agent token on operator routes', async () => {
    for (const token of [world.owner.token, world.tokens.admin, world.tokens.revoked, 'junk']) {
      expectRefused(
        await t.post('/v2/agent/sync', { token, body: {} }),
        401,
        `sync with ${token.slice(0, 6)}`,
      );
    }
    for (const token of [world.owner.token, world.tokens.agent, world.outsider.token]) {
      expectRefused(
        await t.post('/v2/admin/agents', { token, body: { name: 'x' } }),
        401,
        'admin agents',
      );
      expectRefused(
        await t.put(`/v2/admin/users/${world.owner.id}/billing`, {
          token,
          body: { status: 'past_due' },
        }),
        401,
        'admin billing',
      );
      expectRefused(
        await t.post('/v2/admin/clock', { token, body: { advance_seconds: 1 } }),
        401,
        'admin clock',
      );
    }
    // The agent token itself works where it belongs.
    expect((await t.post('/v2/agent/sync', { token: world.tokens.agent, body: {} })).status).toBe(
      200,
    );
  });

  it('a logged-out session and a deleted token stop working at once, though they were just used (cached)', async () => {
    const login = await t.post('/v2/auth/login', {
      body: { email: world.outsider.email, password: FACTORY_PASSWORD },
    });
    expect(login.status, login.text).toBe(200);
    const session = login.json.access_token;
    expect((await t.get('/v2/user', { token: session })).status).toBe(200);
    expect((await t.post('/v2/auth/logout', { token: session })).status).toBe(204);
    expectRefused(await t.get('/v2/user', { token: session }), 401, 'after logout');

    const pat = await t.post('/v2/user/tokens', {
      token: world.outsider.token,
      body: { name: 'doomed' },
    });
    expect((await t.get('/v2/user', { token: pat.json.token })).status).toBe(200);
    expect(
      (await t.del(`/v2/user/tokens/${pat.json.id}`, { token: world.outsider.token })).status,
    ).toBe(204);
    expectRefused(await t.get('/v2/user', { token: pat.json.token }), 401, 'after delete');
  });

  it('a token that expires while cached is refused once the service clock passes its expiry', async () => {
    // Its own database: the clock moves for everything in it.
    const c = await testApp();
    try {
      const w = await buildWorld(c);
      const pat = await c.post('/v2/user/tokens', {
        token: w.owner.token,
        body: { name: 'short', expires_in_days: 1 },
      });
      expect(pat.status, pat.text).toBe(201);
      const login = await c.post('/v2/auth/login', {
        body: { email: w.owner.email, password: FACTORY_PASSWORD },
      });
      const session = login.json.access_token;
      for (const token of [pat.json.token, session])
        expect((await c.get('/v2/user', { token })).status).toBe(200);
      expect(
        (await c.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: 2 * 86400 } }))
          .status,
      ).toBe(200);
      expectRefused(
        await c.get('/v2/user', { token: pat.json.token }),
        401,
        '1-day token after 2 days',
      );
      expect(
        (await c.get('/v2/user', { token: session })).status,
        'a 30-day session still works after 2 days',
      ).toBe(200);
      expect(
        (await c.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: 29 * 86400 } }))
          .status,
      ).toBe(200);
      expectRefused(await c.get('/v2/user', { token: session }), 401, 'session after 31 days');
      expect(
        (await c.get('/v2/user', { token: w.owner.token })).status,
        'a token without expiry still works',
      ).toBe(200);
    } finally {
      await c.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

/** A body that passes validation, so that the answer comes from the access check. */
function validSample(s: Schema | undefined, name = ''): unknown {
  if (!s) return undefined;
  if (s.anyOf || s.oneOf) return validSample((s.anyOf ?? s.oneOf)[0], name);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'string':
      if (s.format === 'email') return 'someone@example.test';
      if (s.format === 'uri') return 'https://probe.example.com/hook';
      if (name === 'owner_id') return world.outsider.id;
      if (name.endsWith('_id') && PARAM_PREFIX[name]) return world.ids[name];
      if (name === 'hostname') return 'probe.example.com';
      if (name === 'mount_path') return '/probe';
      if (name === 'password') return 'long-enough-password';
      return (
        ['probe', 'a', 'c0ffee'.repeat(7).slice(0, 40)].find(
          (c) => !s.pattern || new RegExp(s.pattern).test(c),
        ) ?? 'a'
      );
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => validSample(s.items, name));
    case 'object': {
      // The required fields; a PATCH body (none required, at least one) gets its first field.
      const props = Object.entries<Schema>(s.properties ?? {});
      // A record (env vars): one entry.
      const each =
        Object.values<Schema>(s.patternProperties ?? {})[0] ??
        (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (each && props.length === 0) return { PROBE_KEY: validSample(each, 'PROBE_KEY') };
      const chosen = props.filter(([k]) => (s.required ?? []).includes(k));
      return Object.fromEntries(
        (chosen.length ? chosen : props.slice(0, 1)).map(([k, v]) => [k, validSample(v, k)]),
      );
    }
    default:
      return 'a';
  }
}

describe('an outsider cannot tell an unreachable resource from a missing one', () => {
  const routes = ROUTES.filter((r) => r.params.some((p) => PARAM_PREFIX[p]));

  async function ask(r: Route, values: Record<string, string>) {
    const body = validSample(r.body);
    const res = await t.app.inject({
      method: r.method as 'GET',
      url: fill(r, values),
      // The same request id, so that the whole body can be compared byte for byte.
      headers: {
        authorization: `Bearer ${world.outsider.token}`,
        'x-request-id': 'probe-1',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      payload: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const h = res.headers;
    return {
      status: res.statusCode,
      body: res.body,
      headers: {
        type: h['content-type'],
        auth: h['www-authenticate'],
        length: h['content-length'],
        allow: h.allow,
        etag: h.etag,
        location: h.location,
      },
    };
  }

  it('covers every route that names a project, team, frame or anything under them', () => {
    expect(routes.length).toBeGreaterThanOrEqual(50);
  });
  const answers: Record<string, string[]> = {};

  for (const r of routes) {
    it(`${r.method} ${r.path}`, async () => {
      const real = await ask(r, world.ids);
      const answer = `${real.status} ${JSON.parse(real.body).code}`;
      answers[answer] = [...(answers[answer] ?? []), `${r.method} ${r.path}`];
      expect(real.status, real.body).toBeGreaterThanOrEqual(400);
      expect(real.status, real.body).toBeLessThan(500);
      expect(real.body).not.toMatch(STACK);
      // Each id in turn names nothing; and all of them at once.
      const variants = [
        ...r.params
          .filter((p) => PARAM_PREFIX[p])
          .map((p) => ({ ...world.ids, [p]: missingId(p) })),
        Object.fromEntries(
          r.params.map((p) => [p, PARAM_PREFIX[p] ? missingId(p) : (world.ids[p] ?? 'x')]),
        ),
      ];
      for (const values of variants) {
        const missing = await ask(r, values);
        expect(
          missing,
          `${fill(r, values)} answers differently from ${fill(r, world.ids)}`,
        ).toEqual(real);
      }
    });
  }

  it('the answers come from the access check (not from validation)', () => {
    report(
      'unreachable vs missing',
      Object.fromEntries(
        Object.entries(answers).map(([k, v]) => [k, k.startsWith('404') ? v.length : v]),
      ),
    );
    // Only the operator's routes (ADMIN_TOKEN) refuse a user token before any lookup.
    const notFound = Object.entries(answers)
      .filter(([k]) => k.startsWith('404 '))
      .flatMap(([, v]) => v);
    const operator = routes.filter((r) => r.path.startsWith('/v2/admin/'));
    expect(operator.length).toBeGreaterThanOrEqual(1);
    expect(notFound.length).toBeGreaterThanOrEqual(routes.length - operator.length);
    for (const refused of answers['401 unauthorized'] ?? [])
      expect(refused).toMatch(/^\w+ \/v2\/admin\//);
  });
});

// ---------------------------------------------------------------------------------------------

describe('security headers and error bodies', () => {
  const cases: Array<[string, () => Promise<Reply>]> = [
    ['200 JSON', () => t.get('/v2/user', { token: world.owner.token })],
    [
      '201 JSON',
      () => t.post('/v2/projects', { token: world.owner.token, body: { name: 'headers' } }),
    ],
    ['401 problem', () => t.get('/v2/user')],
    ['404 route_not_found', () => t.get('/v2/nothing-here')],
    ['404 unreachable project', () => t.get(world.paths.project, { token: world.outsider.token })],
    [
      '400 invalid JSON',
      () =>
        t.post('/v2/projects', {
          token: world.owner.token,
          raw: '{"name":',
          headers: { 'content-type': 'application/json' },
        }),
    ],
    ['400 bad percent-encoding', () => t.get('/v2/teams/%ZZ', { token: world.owner.token })],
    [
      '413 body too large',
      () =>
        t.post('/v2/projects', {
          token: world.owner.token,
          raw: JSON.stringify({ name: 'x'.repeat(300_000) }),
          headers: { 'content-type': 'application/json' },
        }),
    ],
    [
      '422 validation',
      () => t.post('/v2/projects', { token: world.owner.token, body: { name: '', zz: 1 } }),
    ],
    ['OpenAPI document', () => t.get('/v2/openapi.json')],
    // README: "open /docs for the API reference": a browser sends no bearer token.
    ['API reference (HTML)', () => t.get('/docs/')],
    ['API reference, a path under it that does not exist', () => t.get('/docs/no-such-file.js')],
    ['invitation page (HTML)', () => t.get('/invitations/not-a-real-token')],
    ['healthz', () => t.get('/healthz')],
  ];

  for (const [name, run] of cases) {
    it(`${name}: nosniff, framing refused, referrer policy, HSTS; no stack trace`, async () => {
      const r = await run();
      const h = r.headers;
      expect(h['x-content-type-options'], name).toBe('nosniff');
      const frameAncestors = /frame-ancestors\s+('none'|'self')/.test(
        String(h['content-security-policy'] ?? ''),
      );
      expect(
        frameAncestors || /^(DENY|SAMEORIGIN)$/i.test(String(h['x-frame-options'] ?? '')),
        `${name}: X-Frame-Options or CSP frame-ancestors`,
      ).toBe(true);
      expect(String(h['referrer-policy'] ?? ''), name).toMatch(
        /no-referrer|same-origin|strict-origin/,
      );
      expect(String(h['strict-transport-security'] ?? ''), name).toMatch(/max-age=[1-9]\d*/);
      expect(r.text, name).not.toMatch(STACK);
      expect(h['x-request-id'], `${name}: X-Request-Id`).toBeTruthy();
      if (name.startsWith('API reference (HTML)'))
        expect(r.status, `${name} is public: ${r.text.slice(0, 200)}`).toBe(200);
      // The invitation page is a page for browsers: its 404 is HTML by design.
      if (r.status >= 400 && !name.startsWith('invitation page')) expectProblem(r, r.status);
    });
  }
});

describe('the OpenAPI document', () => {
  it('declares every answer above: status, content type and body (runs last)', () => {
    expect(answers.violations).toEqual([]);
    expect(answers.checked).toBeGreaterThan(0);
  });
});
