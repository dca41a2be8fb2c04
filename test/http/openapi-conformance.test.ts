// The OpenAPI document as a product (issue 18): every operation named, tagged, described, with
// problem+json errors and named bodies; examples valid; request schemas that allow exactly what
// the server's own checks accept; and answers, content type included, as the document says
// (here a representative set; the fuzz, security and authorization tests check all of theirs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { testApp, type TestApp } from '../helpers/app.ts';
import { checkAnswers, conformance } from '../helpers/openapi-conformance.ts';
import { bodyOf } from '../helpers/world.ts';
import { expectProblem, newProject, newTeam, newUser } from '../helpers/factories.ts';
import { cloudAgent, defaultSpace, framePath, newFrame } from '../helpers/frames.ts';
import { operationIdOf } from '../../src/http/openapi.ts';
import { EXAMPLES } from '../../src/http/openapi-examples.ts';
import { parseHostname } from '../../src/domains/domain-hostname.ts';
import { mountPathProblem } from '../../src/volumes/volumes-service.ts';

let t: TestApp;
let doc: any;
let answers: Awaited<ReturnType<typeof checkAnswers>>;
beforeAll(async () => {
  t = await testApp();
  answers = await checkAnswers(t);
  doc = (await t.get('/v2/openapi.json')).json;
});
afterAll(async () => {
  await t?.close();
});

const operations = () =>
  Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op, at: `${method} ${path}` })),
  );
const component = (ref: string) => doc.components.schemas[ref.split('/').pop() ?? ''];

describe('every operation', () => {
  it('has the operationId of the one rule, unique', () => {
    const ids = operations().map(({ path, method, op }) => {
      expect(op.operationId, `${method} ${path}`).toBe(operationIdOf(method, path));
      return op.operationId;
    });
    expect(ids.length).toBeGreaterThan(90);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operationIdOf('get', '/v2/teams/{team_id}/members')).toBe('getTeamMembers');
    expect(operationIdOf('post', '/v2/auth/verify-email')).toBe('postAuthVerifyEmail');
  });

  it('has tags declared with a description, a description, a summary and a security', () => {
    const declared = new Map(doc.tags.map((tag: any) => [tag.name, tag.description]));
    for (const { op, at } of operations()) {
      expect(op.tags?.length, at).toBeGreaterThan(0);
      for (const tag of op.tags) expect(declared.get(tag), `${at}: tag ${tag}`).toBeTruthy();
      expect(op.description, at).toMatch(/Needs/);
      expect(op.summary, at).toBeTruthy();
      expect(op.security, at).toBeDefined();
    }
    expect(doc.servers).toEqual([{ url: t.config.publicUrl, description: expect.any(String) }]);
  });

  it('declares its errors as application/problem+json with the Problem schema', () => {
    for (const { op, at } of operations()) {
      const errors = Object.keys(op.responses).filter((s) => /^[45]/.test(s));
      expect(errors, at).toEqual(expect.arrayContaining(['4XX', '5XX']));
      for (const status of errors) {
        expect(op.responses[status].content, `${at} ${status}`).toEqual({
          'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
        });
      }
    }
  });

  it('names its request body and success bodies, and describes every answer', () => {
    for (const { op, at } of operations()) {
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) expect(body.$ref, `${at} body`).toMatch(/^#\/components\/schemas\/\w+$/);
      for (const [status, answer] of Object.entries<any>(op.responses)) {
        expect(answer.description, `${at} ${status}`).not.toBe('Default Response');
        const json = answer.content?.['application/json']?.schema;
        if (json) expect(json.$ref, `${at} ${status}`).toMatch(/^#\/components\/schemas\/\w+$/);
      }
    }
    for (const name of ['CreateTeamBody', 'TeamList', 'Problem', 'ListEnvelope'])
      expect(doc.components.schemas[name], name).toBeDefined();
    expect(component('#/components/schemas/TeamList').allOf[0]).toEqual({
      $ref: '#/components/schemas/ListEnvelope',
    });
  });

  it('declares the logs and events streams as text/event-stream beside their JSON page', () => {
    const streams = operations().filter(
      ({ op }) => op.responses['200']?.content?.['text/event-stream'],
    );
    expect(streams.map(({ op }) => op.operationId).sort()).toEqual([
      'getProjectEvents',
      'getProjectSpaceFrameEvents',
      'getProjectSpaceFrameLogs',
    ]);
    for (const { op } of streams)
      expect(op.responses['200'].content['application/json'].schema.$ref).toBeDefined();
  });
});

describe('examples and schemas', () => {
  it('shows an example of each main record, valid against its schema', () => {
    const c = conformance(doc);
    const names = ['Team', 'Member', 'Invitation', 'Project', 'Grant', 'Frame'];
    for (const name of [...names, 'NotificationEndpoint', 'NotificationDelivery']) {
      const schema = doc.components.schemas[name];
      expect(schema.examples, name).toEqual([EXAMPLES[name]]);
      expect(c.validate({ $ref: `#/components/schemas/${name}` }, EXAMPLES[name]), name).toEqual(
        [],
      );
    }
  });

  // The document's schema and the server's check, on the same strings: each accepts exactly
  // what the other does (the server's check runs after the schema; it must refuse nothing the
  // schema allowed, and the schema must not refuse what the server would take).
  const field = (path: string, method: string, name: string) =>
    (bodyOf(doc, doc.paths[path][method]) as any).properties[name];
  const agree = (schema: unknown, server: (s: string) => boolean, values: fc.Arbitrary<string>) => {
    const c = conformance(doc);
    fc.assert(
      fc.property(values, (s) => {
        expect(c.validate(schema, s).length === 0, JSON.stringify(s)).toBe(server(s));
      }),
      { numRuns: 3000 },
    );
  };

  it('hostname: the pattern allows exactly what the domain service accepts', () => {
    const hostname = field(
      '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/domains',
      'post',
      'hostname',
    );
    const accepts = (s: string) => !('error' in parseHostname(s));
    const label = fc.oneof(
      {
        arbitrary: fc.constantFrom('app', 'Web', 'x1', 'a-b', 'example', 'io', '1password'),
        weight: 4,
      },
      fc.string({ unit: fc.constantFrom('a', 'Z', '0', '7', '-', '_', 'é'), maxLength: 6 }),
      fc.constantFrom('x'.repeat(63), 'y'.repeat(64), '123', 'xn--bcher-kva'),
    );
    const names = fc
      .tuple(
        fc.array(label, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('', '.', '..'),
        fc.constantFrom('', ' ', '\t'),
      )
      .map(([labels, end, pad]) => `${pad}${labels.join('.')}${end}${pad}`);
    agree(hostname, accepts, names);
    const long = (n: number) =>
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(n)}`;
    const c = conformance(doc);
    for (const s of [long(39), `${long(39)}.`, long(40), '0@com', '1.2.3.4', 'a.b'])
      expect(c.validate(hostname, s).length === 0, s).toBe(accepts(s));
  });

  it('mount_path: the pattern allows exactly what the volume service accepts', () => {
    const mountPath = field(
      '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/volumes',
      'post',
      'mount_path',
    );
    const segment = fc.oneof(
      { arbitrary: fc.constantFrom('data', 'srv', 'app', '.cache', 'a@b+c=d', 'v-1'), weight: 4 },
      fc.constantFrom('proc', 'etc', 'var', 'run', 'usr', '.', '..', '', '...'),
      fc.string({
        unit: fc.constantFrom('a', '.', '-', '@', '+', '=', ' ', '_', '~'),
        maxLength: 4,
      }),
    );
    const paths = fc
      .tuple(fc.constantFrom('/', '', '//'), fc.array(segment, { maxLength: 4 }), fc.boolean())
      .map(([start, segs, slash]) => `${start}${segs.join('/')}${slash ? '/' : ''}`);
    agree(mountPath, (s) => mountPathProblem(s) === undefined, paths);
  });

  it('e-mail: the pattern allows what the server validates, not every RFC 5321 mailbox', () => {
    const email = (bodyOf(doc, doc.paths['/v2/auth/signup'].post) as any).properties.email;
    const c = conformance(doc);
    expect(c.validate(email, '0@com')).not.toEqual([]);
    expect(c.validate(email, 'Ada.Lovelace+x@Example.com')).toEqual([]);
  });
});

describe('answers', () => {
  it('a representative set of every kind of answer conforms, errors included', async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann, 'Docs');
    const project = await newProject(t, ann, 'Docs');
    await cloudAgent(t, 'cloud-openapi');
    const space = await defaultSpace(t, ann, project.id);
    const frame = await newFrame(t, ann, project.id, space, { name: 'web' });
    const token = ann.token;
    const p = framePath(frame);
    expect((await t.get('/v2/teams', { token })).status).toBe(200);
    expect((await t.get(`/v2/teams/${team.id}/members`, { token })).status).toBe(200);
    expect((await t.get(p, { token })).status).toBe(200);
    expect((await t.get(`${p}/logs`, { token })).status).toBe(200);
    expect((await t.get(`${p}/events`, { token })).status).toBe(200);
    expect((await t.put(`${p}/env`, { token, body: { vars: { A: 'b' } } })).status).toBe(200);
    const domain = { hostname: ' Shop.Example.COM. ' };
    expect((await t.post(`${p}/domains`, { token, body: domain })).status).toBe(201);
    expectProblem(await t.post(`${p}/domains`, { token, body: { hostname: '0@com' } }), 422);
    expectProblem(await t.get('/v2/teams'), 401);
    expectProblem(await t.get(`/v2/teams/team_${'0'.repeat(26)}`, { token }), 404);
    expectProblem(await t.post('/v2/teams', { token, body: { name: 'x' } }), 422);
    expect(answers.violations).toEqual([]);
    expect([...answers.seen]).toEqual(
      expect.arrayContaining(['GET /v2/teams 200', 'GET /v2/teams 4XX', 'POST /v2/teams 4XX']),
    );
  });

  it('the check finds a mislabelled error, a wrong body and an undeclared status', () => {
    const c = conformance(doc);
    const problem = JSON.stringify({
      type: 'about:blank',
      title: 'Not found',
      status: 404,
      detail: 'No such team.',
      code: 'team_not_found',
      request_id: 'req_1',
    });
    const get = { method: 'GET', url: '/v2/teams/team_1', body: problem };
    expect(c.check({ ...get, status: 404, contentType: 'application/problem+json' })).toEqual([]);
    expect(c.check({ ...get, status: 404, contentType: 'application/json' })).toHaveLength(1);
    expect(
      c.check({ ...get, status: 200, contentType: 'application/json', body: '{"id":1}' }),
    ).toHaveLength(1);
    expect(c.check({ ...get, status: 302, contentType: 'text/html', body: '' })).toEqual([
      'GET /v2/teams/{team_id} → 302: status not declared',
    ]);
  });
});
