// Every refusal says what to send: each bad input below goes to the running app, and the
// answer's status, code and message are checked. A message must name the accepted values in
// words: never a regex, "must NOT be valid" or one error per anyOf branch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type Reply, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  newProject,
  newTeam,
  newUser,
  share,
  type TestUser,
} from '../helpers/factories.ts';
import { ADMIN, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { PATTERN_MESSAGES } from '../../src/http/schemas.ts';
import { bodyOf } from '../helpers/world.ts';

let t: TestApp;
let owner: TestUser;
let team: { id: string };
let project: { id: string };
let grantId: string;
let frame: string;
let member: TestUser;

beforeAll(async () => {
  t = await testApp();
  owner = await newUser(t, 'owner');
  member = await newUser(t, 'member');
  team = await newTeam(t, owner);
  await addMember(t, team.id, member, 'member');
  project = await newProject(t, owner);
  grantId = await share(t, team.id, project.id, 'viewer');
  frame = framePath(await newFrame(t, owner, project.id, await defaultSpace(t, owner, project.id)));
});
afterAll(async () => {
  await t.close();
});

/** The owner's signed-in request with a JSON body. */
const as = (body: unknown) => ({ token: owner.token, body });

// What no message may contain: Ajv's own wording, and regexes.
const UNHELPFUL =
  /must NOT be valid|must match pattern|must match a schema|must be equal to one of|\^\[|\$$/;

interface Case {
  what: string;
  send: () => Promise<Reply>;
  status: number;
  code: string;
  /** The field errors, exactly (for 422). */
  errors?: Array<{ path: string; message: RegExp }>;
  /** What the detail must say. */
  detail: RegExp;
}

const cases: Case[] = [
  {
    what: 'a reserved port names the reserved ports and the range to send',
    send: () => t.patch(frame, as({ port: 6379 })),
    status: 422,
    code: 'validation_failed',
    errors: [
      {
        path: 'port',
        message:
          /^must not be 6379, 27017, 9898 or 27018 \(reserved\): send an integer from 1024 to/,
      },
    ],
    detail: /^port: must not be 6379/,
  },
  {
    what: 'a value outside an enum lists the allowed values',
    send: () =>
      t.put(`/v2/admin/users/${owner.id}/billing`, { token: ADMIN, body: { status: 'paused' } }),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'status', message: /^must be one of: active, past_due$/ }],
    detail: /^status: must be one of: active, past_due$/,
  },
  {
    what: 'a non-string env value in a PATCH is one error: a string or null',
    send: () => t.patch(`${frame}/env`, as({ vars: { A: 5 } })),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'vars.A', message: /^must be a string or null$/ }],
    detail: /^vars\.A: must be a string or null$/,
  },
  {
    what: 'a too long env value in a PATCH is the one error of the string branch',
    send: () => t.patch(`${frame}/env`, as({ vars: { A: 'x'.repeat(32 * 1024 + 1) } })),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'vars.A', message: /^must be at most 32768 characters long$/ }],
    detail: /^vars\.A: must be at most 32768 characters long$/,
  },
  {
    what: 'a non-string env value in a PUT says string',
    send: () => t.put(`${frame}/env`, as({ vars: { A: true } })),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'vars.A', message: /^must be a string$/ }],
    detail: /^vars\.A: must be a string$/,
  },
  {
    what: 'a bad env name says what a name is, once',
    send: () => t.put(`${frame}/env`, as({ vars: { '1A': 'x' } })),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'vars.1A', message: /^name must be letters, digits and underscores, not/ }],
    detail: /DATABASE_URL/,
  },
  {
    what: 'a slug error describes a slug instead of printing its regex',
    send: () => t.post('/v2/teams', as({ name: 'Web', slug: 'Web_Team' })),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'slug', message: /^must be lowercase letters and digits, .*"web-team"/ }],
    detail: /^slug: must be lowercase letters and digits/,
  },
  {
    what: 'a port sent as a string says integer',
    send: () => t.patch(frame, as({ port: '8080' })),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'port', message: /^must be an integer$/ }],
    detail: /^port: must be an integer$/,
  },
  {
    what: 'an empty PATCH names the fields it takes',
    send: () => t.patch(`/v2/teams/${team.id}`, as({})),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: '', message: /^send at least one of: name, slug$/ }],
    detail: /^body: send at least one of: name, slug$/,
  },
  {
    what: 'an unknown field lists the fields there are',
    send: () => t.post('/v2/teams', as({ name: 'Web', slug: 'web', colour: 'red' })),
    status: 422,
    code: 'unknown_field',
    errors: [{ path: 'colour', message: /^unknown field "colour"; the fields are: name, slug$/ }],
    detail: /colour/,
  },
  {
    what: 'a grant with role owner talks about grants',
    send: () =>
      t.post(`/v2/teams/${team.id}/grants`, as({ project_id: project.id, role: 'owner' })),
    status: 422,
    code: 'role_not_allowed',
    errors: [{ path: 'role', message: /^must be viewer, member or admin: a grant's role is/ }],
    detail: /^role: must be viewer, member or admin: a grant's role/,
  },
  {
    what: "a grant's role changed to owner talks about grants",
    send: () => t.patch(`/v2/teams/${team.id}/grants/${grantId}`, as({ role: 'owner' })),
    status: 422,
    code: 'role_not_allowed',
    errors: [{ path: 'role', message: /a grant's role is one of these/ }],
    detail: /grant's role/,
  },
  {
    what: 'a missing role lists the roles to send',
    send: () => t.post(`/v2/teams/${team.id}/grants`, as({ project_id: project.id })),
    status: 422,
    code: 'validation_failed',
    errors: [{ path: 'role', message: /^is required: send one of viewer, member, admin$/ }],
    detail: /^role: is required: send one of viewer, member, admin$/,
  },
  {
    what: 'an invitation with role owner talks about invitations',
    send: () =>
      t.post(`/v2/teams/${team.id}/invitations`, as({ email: 'x@example.test', role: 'owner' })),
    status: 422,
    code: 'role_not_allowed',
    errors: [{ path: 'role', message: /^must be viewer, member or admin: an invitation's role/ }],
    detail: /invitation's role/,
  },
  {
    what: 'a promotion to owner talks about members',
    send: () => t.patch(`/v2/teams/${team.id}/members/${member.id}`, as({ role: 'owner' })),
    status: 422,
    code: 'role_not_allowed',
    errors: [{ path: 'role', message: /^must be viewer, member or admin: a member's role/ }],
    detail: /member's role/,
  },
  {
    what: 'Authorization: <token> without Bearer says how to send it',
    send: () => t.get('/v2/user', { headers: { authorization: owner.token } }),
    status: 401,
    code: 'malformed_authorization',
    detail: /must be "Bearer <token>"/,
  },
  {
    what: 'Basic credentials say how to send a token',
    send: () => t.get('/v2/projects', { headers: { authorization: 'Basic YTpi' } }),
    status: 401,
    code: 'malformed_authorization',
    detail: /must be "Bearer <token>"/,
  },
  {
    what: 'an agent route with a bare token says how to send it',
    send: () =>
      t.post('/v2/agent/sync', { headers: { authorization: 'some-agent-token' }, body: {} }),
    status: 401,
    code: 'malformed_authorization',
    detail: /must be "Bearer <token>"/,
  },
  {
    what: 'an unknown token still says unknown, and what to send',
    send: () => t.get('/v2/user', { token: `fp_${'A'.repeat(43)}` }),
    status: 401,
    code: 'unauthorized',
    detail: /unknown, expired or revoked: .*Authorization: Bearer <token>/,
  },
  {
    what: 'no token says what to send',
    send: () => t.get('/v2/user'),
    status: 401,
    code: 'unauthorized',
    detail: /send Authorization: Bearer <token>/,
  },
  {
    what: 'a wrong method on an existing path is 405 and names the methods',
    send: () => t.put('/v2/projects', as({ name: 'a' })),
    status: 405,
    code: 'method_not_allowed',
    detail: /^\/v2\/projects does not take PUT: send GET, HEAD or POST\.$/,
  },
  {
    what: 'a wrong method on a path with ids is 405 too',
    send: () => t.post(`/v2/teams/${team.id}/grants/${grantId}`, as({})),
    status: 405,
    code: 'method_not_allowed',
    detail: /does not take POST: send PATCH or DELETE\.$/,
  },
  {
    what: 'an unknown path stays 404',
    send: () => t.put('/v2/no-such-thing', as({ name: 'a' })),
    status: 404,
    code: 'route_not_found',
    detail: /^No route PUT \/v2\/no-such-thing\.$/,
  },
];

describe('every refusal says what to send', () => {
  it.each(cases)('$what', async (c) => {
    const r = await c.send();
    expect(r.status, r.text).toBe(c.status);
    expect(String(r.headers['content-type'])).toContain('application/problem+json');
    expect(r.json).toMatchObject({ status: c.status, code: c.code });
    expect(r.json.detail).toMatch(c.detail);
    expect(r.json.detail).not.toMatch(UNHELPFUL);
    if (c.status === 401) expect(r.headers['www-authenticate']).toBe('Bearer');
    if (c.errors) {
      expect(r.json.errors).toHaveLength(c.errors.length);
      c.errors.forEach((e, n) => {
        expect(r.json.errors[n].path).toBe(e.path);
        expect(r.json.errors[n].message).toMatch(e.message);
      });
    }
  });

  it('405 carries an Allow header with the methods of the path', async () => {
    const r = await t.del('/v2/projects', { token: owner.token });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET, HEAD, POST');
    const one = await t.post(`/v2/teams/${team.id}/grants/${grantId}`, as({}));
    expect(one.headers.allow).toBe('PATCH, DELETE');
  });
});

describe('the OpenAPI document', () => {
  const roleEnum = (schema: any): unknown[] | undefined => schema?.properties?.role?.enum;

  it('lists no owner role for grants and invitations, in answers and in requests', async () => {
    const doc = (await t.get('/v2/openapi.json')).json;
    const body = (path: string, method: string) => bodyOf(doc, doc.paths[path][method]);
    const enums = {
      Grant: roleEnum(doc.components.schemas.Grant),
      Invitation: roleEnum(doc.components.schemas.Invitation),
      'POST grants': roleEnum(body('/v2/teams/{team_id}/grants', 'post')),
      'PATCH grant': roleEnum(body('/v2/teams/{team_id}/grants/{grant_id}', 'patch')),
      'POST invitations': roleEnum(body('/v2/teams/{team_id}/invitations', 'post')),
      'PATCH member': roleEnum(body('/v2/teams/{team_id}/members/{user_id}', 'patch')),
    };
    for (const [where, values] of Object.entries(enums)) {
      expect(values, where).toEqual(['viewer', 'member', 'admin']);
    }
  });

  it('every pattern of a request body or query has a message in words', async () => {
    const doc = (await t.get('/v2/openapi.json')).json;
    const patterns = new Set<string>();
    const walk = (s: unknown): void => {
      if (Array.isArray(s)) s.forEach(walk);
      else if (s && typeof s === 'object') {
        const o = s as Record<string, unknown>;
        if (typeof o.pattern === 'string') patterns.add(o.pattern);
        Object.values(o).forEach(walk);
      }
    };
    for (const ops of Object.values<any>(doc.paths)) {
      for (const op of Object.values<any>(ops)) {
        walk(bodyOf(doc, op));
        walk((op.parameters ?? []).filter((p: any) => p.in === 'query'));
      }
    }
    expect(patterns.size).toBeGreaterThan(3);
    expect([...patterns].filter((p) => !PATTERN_MESSAGES.has(p))).toEqual([]);
  });
});
