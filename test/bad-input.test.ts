// Hostile input against every route of the OpenAPI document (GET /v2/openapi.json), so a new
// route is covered the day it lands. Every request is authenticated (the team owner; the operator
// token or an agent token where the route wants one) and uses real ids, so that the only thing
// wrong is the hostile part.
//
// For every answer: never a 5xx; an error is application/problem+json whose `status` is the HTTP
// status and whose `code` is a snake_case string; a 422 lists `errors: [{path, message}]`; and a
// refused request changes nothing (row count and content digest of every table, before and after).
// Contract statuses (CONTRACT 1): body not JSON → 400 invalid_json; wrong content type → 400;
// unknown field → 422 naming it; body over the limit → 413.
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testApp, type Reply } from './helpers/app.ts';
import {
  ADMIN,
  buildWorld,
  fill,
  routesOf,
  type Route,
  type Schema,
  type World,
} from './helpers/world.ts';
import { newUser } from './helpers/factories.ts';
import { unique } from './helpers/endpoints.ts';
import { must } from './helpers/checked.ts';
import { conformance } from './helpers/openapi-conformance.ts';

const t = await testApp();
afterAll(async () => {
  await t.close();
});

const LIMIT = t.config.bodyLimitBytes;

const DOC = (await t.get('/v2/openapi.json')).json;
const ROUTES = routesOf(DOC);
const documented = conformance(DOC);
const label = (r: Route) => `${r.method} ${r.path}`;
const takesBody = (r: Route) => r.method !== 'GET';

// A world of real ids (helpers/world.ts), rebuilt whenever a request changed something (a
// success, or a bug).
let world: World | undefined;
async function getWorld() {
  world ??= await buildWorld(t);
  return world;
}

/** Path params this file knows a real value for. A new kind of id needs a line in buildWorld(). */
const KNOWN_PARAMS = [
  'team_id',
  'org_id',
  'user_id',
  'invitation_id',
  'grant_id',
  'project_id',
  'space_id',
  'token_id',
  'token',
  'agent_id',
  'frame_id',
  'domain_id',
  'volume_id',
  'deployment_id',
  'endpoint_id',
  'delivery_id',
  'hostname',
];

const fillPath = (r: Route, w: World, override: Record<string, string> = {}) =>
  fill(r, { ...w.ids, ...override });

// ---------------------------------------------------------------------------------------------
// Every table the API writes (users, teams, team_members, invitations, grants, projects, spaces,
// emails, audit_events, access_tokens, and whatever later migrations add): row count and a digest.

// Bookkeeping that is not the API's state: rate-limit counters count refused requests too, the
// service clock is the operator's, and last_used_at / last_seen_at move on every authenticated call.
const NOT_STATE = new Set(['rate_limits', 'service_clock']);
const VOLATILE = ['last_used_at', 'last_seen_at'];
const { rows: tableRows } = await sql<{
  name: string;
}>`select table_name as name from information_schema.tables
  where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(t.db);
const TABLES = tableRows
  .map((r) => r.name)
  .filter((n) => !NOT_STATE.has(n) && !/migration/i.test(n));
const { rows: volatileRows } = await sql<{
  name: string;
}>`select distinct table_name as name from information_schema.columns
  where table_schema = 'public' and column_name in (${sql.join(VOLATILE)})`.execute(t.db);
const WITH_VOLATILE = new Set(volatileRows.map((r) => r.name));

// Per table: the row count, and a digest that any insert, update or delete moves. Most tables use
// the sum of the rows' xmin (a new row version on every write; cheap); tables with a volatile
// column use a hash of their content without it.
const SNAPSHOT_SQL = TABLES.map((name) => {
  const digest = WITH_VOLATILE.has(name)
    ? `sum(hashtextextended((to_jsonb(x) ${VOLATILE.map((c) => `- '${c}'`).join(' ')})::text, 0))`
    : 'sum(x.xmin::text::bigint)';
  return `select '${name}' as tb, count(*)::int as n, coalesce(${digest}, 0)::text as h from "${name}" x`;
}).join(' union all ');

async function snapshot(): Promise<Record<string, { rows: number; digest: string }>> {
  const { rows } = await sql<{
    tb: string;
    n: number;
    h: string;
  }>`${sql.raw(SNAPSHOT_SQL)}`.execute(t.db);
  return Object.fromEntries(rows.map((r) => [r.tb, { rows: r.n, digest: r.h }]));
}

// ---------------------------------------------------------------------------------------------
// Valid bodies, generated from the schema, so that an attack changes one thing only.

function sampleString(s: Schema, name: string): string {
  if (s.format === 'email') return `bad-input-${unique()}@example.test`;
  if (s.format === 'uri') return `https://hooks.example.com/${unique()}`;
  // Ids in a body name real things of the world: the owner for owner_id, and so on.
  if (name === 'owner_id' && world) return world.owner.id;
  if (name.endsWith('_id') && world?.ids[name]) return world.ids[name];
  if (name === 'hostname') return `h${unique()}.example.com`;
  if (name === 'mount_path') return `/data/${unique()}`;
  if (name === 'health_check_path') return '/healthz';
  if (name === 'known_state') return '0'.repeat(32);
  const candidates = [`s-${unique()}`, `v${unique()}`, 'abc', 'a', 'c0ffee'.repeat(7).slice(0, 40)];
  let v = candidates.find((c) => !s.pattern || new RegExp(s.pattern).test(c)) ?? 'a';
  if (name === 'password') v = 'long-enough-password';
  if (s.minLength && v.length < s.minLength) v = v.padEnd(s.minLength, 'x');
  if (s.maxLength && v.length > s.maxLength) v = v.slice(0, s.maxLength);
  return v;
}

/** A schema that also takes null (Nullable: `type: [t, 'null']`) as the schema of its `t`. */
const nonNull = (s: Schema): Schema =>
  Array.isArray(s.type) ? { ...s, type: s.type.find((x: string) => x !== 'null') } : s;
const takesNull = (s: Schema) => Array.isArray(s.type) && s.type.includes('null');

function sample(schema: Schema, name = ''): unknown {
  const s = nonNull(schema);
  if (s.anyOf) return sample(s.anyOf[0], name);
  if (s.oneOf) return sample(s.oneOf[0], name);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'string':
      return sampleString(s, name);
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      // As many items as it must hold (the first of an enum holds uniqueItems for one).
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items ?? {}, name));
    case 'object': {
      const out = Object.fromEntries(
        Object.entries<Schema>(s.properties ?? {}).map(([k, v]) => [k, sample(v, k)]),
      );
      // A record (env vars): one entry, so that minProperties holds.
      const each =
        Object.values<Schema>(s.patternProperties ?? {})[0] ??
        (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (each && Object.keys(out).length === 0) out.ZZ_KEY = sample(each, 'ZZ_KEY');
      return out;
    }
    default:
      return 'a';
  }
}

const typeOf = (s: Schema): string =>
  nonNull(s).type ?? (s.anyOf ?? s.oneOf)?.[0]?.type ?? 'string';

// ---------------------------------------------------------------------------------------------
// Requests and the checks every answer must pass.

interface Attack {
  name: string;
  /** A path-param override, a query string, and what to send as the body. */
  params?: Record<string, string>;
  query?: string;
  raw?: string;
  contentType?: string | null;
  /** JSON value to send; built per call, so that samples are fresh. */
  json?: (r: Route) => unknown;
  check: (res: Reply, r: Route) => void;
}

function expectWellFormed(res: Reply, where: string) {
  expect(res.status, `${where}: never a 5xx; ${res.text.slice(0, 300)}`).toBeLessThan(500);
  if (res.status < 400) return;
  expect(
    String(res.headers['content-type']),
    `${where}: problem+json; ${res.text.slice(0, 300)}`,
  ).toMatch(/^application\/problem\+json/);
  expect(res.json?.status, `${where}: status in the body`).toBe(res.status);
  expect(
    typeof res.json?.code === 'string' && /^[a-z][a-z0-9_]*$/.test(res.json.code),
    `${where}: snake_case code, got ${res.json?.code}`,
  ).toBe(true);
  expect(res.text, `${where}: no internals`).not.toMatch(
    /\bat .+\.(ts|js):\d+|syntax error at|relation "|violates .* constraint/i,
  );
  if (res.status === 422) expectFieldErrors(res, where);
}

function expectFieldErrors(res: Reply, where: string) {
  expect(
    Array.isArray(res.json?.errors) && res.json.errors.length > 0,
    `${where}: a 422 lists errors [{path, message}]: ${res.text.slice(0, 300)}`,
  ).toBe(true);
  for (const e of res.json.errors) {
    expect(typeof e.path, `${where}: error path`).toBe('string');
    expect(typeof e.message === 'string' && e.message.length > 0, `${where}: error message`).toBe(
      true,
    );
  }
}

function expectStatus(res: Reply, status: number | number[], code?: string | RegExp) {
  const allowed = Array.isArray(status) ? status : [status];
  expect(allowed, `status ${res.status}: ${res.text.slice(0, 300)}`).toContain(res.status);
  if (code)
    expect(res.json?.code, res.text.slice(0, 300)).toMatch(
      typeof code === 'string' ? new RegExp(`^${code}$`) : code,
    );
}

function expectErrorAt(res: Reply, path: string) {
  expectStatus(res, 422);
  const paths: string[] = (res.json?.errors ?? []).map((e: { path: string }) => e.path);
  // The field itself, or something inside it (events.0 for an array of objects).
  expect(
    paths.some((p) => p === path || p.startsWith(`${path}.`)),
    `errors name "${path}": ${res.text.slice(0, 300)}`,
  ).toBe(true);
}

async function send(r: Route, a: Attack): Promise<void> {
  const w = await getWorld();
  const path = fillPath(r, w, a.params) + (a.query ? `?${a.query}` : '');
  const bearer =
    r.scheme === 'operator' ? ADMIN : r.scheme === 'agent' ? w.tokens.agent : w.owner.token;
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}` };
  let payload: string | undefined;
  if (a.raw !== undefined) payload = a.raw;
  else if (a.json) payload = JSON.stringify(a.json(r));
  if (payload !== undefined && a.contentType !== null)
    headers['content-type'] = a.contentType ?? 'application/json';
  const before = await snapshot();
  const res0 = await t.app.inject({ method: r.method as 'GET', url: path, headers, payload });
  let json: any = null;
  try {
    json = res0.body ? JSON.parse(res0.body) : null;
  } catch {
    /* not JSON */
  }
  const res: Reply = { status: res0.statusCode, json, text: res0.body, headers: res0.headers };
  const after = await snapshot();
  const changed = JSON.stringify(before) !== JSON.stringify(after);
  if (changed || (res.status < 400 && r.method !== 'GET')) world = undefined; // start clean next time
  const where = `${r.method} ${path.slice(0, 120)} [${a.name}]`;
  expectWellFormed(res, where);
  const contentType = String(res0.headers['content-type'] ?? '');
  const answer = { method: r.method, url: path, status: res.status, contentType, body: res.text };
  expect(documented.check(answer), `${where}: as the OpenAPI document says`).toEqual([]);
  if (res.status >= 400)
    expect(after, `${where}: a refused request changes nothing`).toEqual(before);
  a.check(res, r);
}

// ---------------------------------------------------------------------------------------------
// The attacks.

const validBody = (r: Route) => (r.body ? sample(r.body) : undefined);
const withBody = (r: Route, extra: Record<string, unknown>) => ({
  ...(validBody(r) as object | undefined),
  ...extra,
});
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

/** Attacks on the body of any route that can carry one; a route without a body schema takes none. */
function bodyAttacks(r: Route): Attack[] {
  const list: Attack[] = [
    {
      name: 'truncated JSON',
      raw: '{"name": "a',
      check: (res) => expectStatus(res, 400, 'invalid_json'),
    },
    {
      name: 'JSON with trailing garbage',
      raw: '{"name": "a"} xyz',
      check: (res) => expectStatus(res, 400, 'invalid_json'),
    },
    {
      name: 'single-quoted pseudo-JSON',
      raw: "{'name': 'a'}",
      check: (res) => expectStatus(res, 400, 'invalid_json'),
    },
    { name: 'bare word', raw: 'undefined', check: (res) => expectStatus(res, 400, 'invalid_json') },
    {
      name: 'text/plain',
      raw: JSON.stringify(validBody(r) ?? { a: 1 }),
      contentType: 'text/plain',
      check: (res) => expectStatus(res, 400),
    },
    {
      name: 'text/plain garbage',
      raw: 'hello there',
      contentType: 'text/plain',
      check: (res) => expectStatus(res, 400),
    },
    {
      name: 'form-urlencoded',
      raw: 'name=a&slug=b',
      contentType: 'application/x-www-form-urlencoded',
      check: (res) => expectStatus(res, 400),
    },
    {
      name: 'application/xml',
      raw: '<name>a</name>',
      contentType: 'application/xml',
      check: (res) => expectStatus(res, 400),
    },
    {
      name: 'no content type',
      raw: JSON.stringify(validBody(r) ?? { a: 1 }),
      contentType: null,
      check: (res) => expectStatus(res, 400),
    },
    {
      name: 'body over the limit (1 MiB)',
      raw: JSON.stringify({ name: 'x'.repeat(1 << 20) }),
      check: (res) => expectStatus(res, 413, 'body_too_large'),
    },
    {
      name: 'body just over the limit',
      raw: JSON.stringify({ name: 'x'.repeat(LIMIT) }),
      check: (res) => expectStatus(res, 413, 'body_too_large'),
    },
    { name: 'JSON array', raw: '[{"name": "a"}]', check: (res) => expectStatus(res, 422) },
    { name: 'JSON string', raw: '"a string"', check: (res) => expectStatus(res, 422) },
    { name: 'JSON number', raw: '42', check: (res) => expectStatus(res, 422) },
    { name: 'JSON true', raw: 'true', check: (res) => expectStatus(res, 422) },
    {
      name: '__proto__ key',
      raw: '{"__proto__": {"role": "owner"}}',
      check: (res) => expectStatus(res, [400, 422]),
    },
    {
      name: 'constructor.prototype key',
      raw: '{"constructor": {"prototype": {"role": "owner"}}}',
      check: (res) => expectStatus(res, [400, 422]),
    },
    {
      name: 'deeply nested arrays',
      raw: nested(50_000),
      check: (res) => expectStatus(res, [400, 422]),
    },
  ];
  // Unknown fields are refused (CONTRACT 1), except by a body schema that declares it takes any
  // (the git push webhook reads a few fields of GitHub's payload).
  if (r.body?.additionalProperties !== true) {
    list.push({
      name: 'unknown field',
      json: (x) => withBody(x, { zz_unknown_field: 1 }),
      check: (res) => {
        expectErrorAt(res, 'zz_unknown_field');
        expectStatus(res, 422, 'unknown_field');
      },
    });
  }
  if (!r.body) return list;
  list.push(
    { name: 'JSON null', raw: 'null', check: (res) => expectStatus(res, [400, 422]) },
    {
      name: 'empty body with a JSON content type',
      raw: '',
      check: (res) => expectStatus(res, 400),
    },
    ...(r.body.additionalProperties === true
      ? []
      : [
          {
            name: 'misspelled field',
            json: (x) => {
              const b = { ...(validBody(x) as object) } as Record<string, unknown>;
              const k = Object.keys(b)[0];
              if (k) {
                b[`${k}x`] = b[k];
                delete b[k];
              }
              return b;
            },
            check: (res: Reply, x: Route) => {
              const k = Object.keys(x.body?.properties ?? {})[0];
              expectErrorAt(res, `${k}x`);
            },
          } satisfies Attack,
        ]),
    {
      name: 'control: the well-formed body passes validation',
      json: (x) => validBody(x),
      check: (res) => expect([400, 413, 422], res.text.slice(0, 300)).not.toContain(res.status),
    },
  );
  if ((r.body.required ?? []).length > 0 || (r.body.minProperties ?? 0) > 0) {
    list.push({ name: 'empty object', json: () => ({}), check: (res) => expectStatus(res, 422) });
  }
  for (const [field, s] of Object.entries<Schema>(r.body.properties ?? {})) {
    const type = typeOf(s);
    const at = (v: unknown, name: string): Attack => ({
      name: `${field}: ${name}`,
      json: (x) => withBody(x, { [field]: v }),
      check: (res) => expectErrorAt(res, field),
    });
    // Each value of a type other than the field's.
    if (!takesNull(s)) list.push(at(null, 'null'));
    if (type !== 'object')
      list.push(at({ a: { b: 1 } }, 'nested object'), at({ $gt: '' }, 'operator object'));
    if (type !== 'array' || typeOf(s.items ?? {}) !== 'string') list.push(at(['a'], 'array'));
    if (type !== 'boolean') list.push(at(true, 'boolean'));
    if (type === 'string') {
      list.push(
        at(12345, 'number for a string'),
        at('x'.repeat(10_000), '10k characters'),
        // PostgreSQL text can hold neither; refused up front rather than failing or altered later.
        at('a\u0000b', 'NUL character'),
        at('a\ud800b', 'lone high surrogate'),
        at('a\udc00b', 'lone low surrogate'),
      );
      // A pattern that matches '' (PLAIN_TEXT_PATTERN: an optional signup name may be empty) does not refuse it.
      const constrained =
        (s.minLength ?? 0) > 0 ||
        (s.pattern && !new RegExp(s.pattern).test('')) ||
        s.format ||
        s.anyOf ||
        s.enum;
      if (constrained) list.push(at('', 'empty string'));
    } else if (type === 'integer' || type === 'number') {
      list.push(at('12', 'string for a number'), at(1e300, 'huge number'));
      if (type === 'integer') list.push(at(1.5, 'fraction'));
      if (s.minimum !== undefined && s.minimum >= 0) list.push(at(-1, 'negative'));
    } else {
      list.push(at('a string', 'string for a structure'), at(12, 'number for a structure'));
    }
  }
  return list;
}

const PATH_VALUES: Array<{ name: string; value: string; status: number[] }> = [
  { name: 'garbage', value: 'garbage', status: [404] },
  { name: 'percent-encoded NUL', value: '%00', status: [404] },
  { name: 'NUL inside an id', value: 'team_01%00', status: [404] },
  { name: 'encoded ../', value: '..%2F..%2Fv2%2Fuser', status: [404] },
  { name: '500 characters', value: 'x'.repeat(500), status: [404] },
  { name: '1000 characters', value: 'x'.repeat(1000), status: [404, 414] },
  { name: 'right prefix, 100 characters', value: `team_${'A'.repeat(100)}`, status: [404] },
  { name: 'SQL injection', value: "'%20OR%20'1'%3D'1", status: [404] },
  { name: 'emoji', value: '%F0%9F%92%A9', status: [404] },
  { name: 'lone surrogate in UTF-8', value: '%ED%A0%80', status: [400, 404] },
  { name: 'invalid percent-encoding', value: '%ZZ', status: [400, 404] },
  { name: 'space', value: '%20', status: [404] },
];

function pathAttacks(r: Route): Attack[] {
  const list: Attack[] = [];
  for (const p of r.params) {
    for (const v of PATH_VALUES) {
      list.push({
        name: `{${p}} = ${v.name}`,
        params: { [p]: v.value },
        json: r.body ? validBody : undefined,
        check: (res) => expectStatus(res, v.status),
      });
    }
    // A real id of another kind.
    const other = p === 'project_id' ? 'team_id' : 'project_id';
    list.push({
      name: `{${p}} = an id of another kind`,
      params: { [p]: `@${other}` },
      json: r.body ? validBody : undefined,
      check: (res) => expectStatus(res, 404),
    });
  }
  return list;
}

const b64 = (v: string) => Buffer.from(v).toString('base64url');
const QUERY_VALUES: Record<string, (s: Schema) => Array<{ name: string; value: string }>> = {
  limit: (s) => [
    { name: 'zero', value: '0' },
    { name: 'negative', value: '-1' },
    { name: 'word', value: 'abc' },
    { name: 'fraction', value: '1.5' },
    { name: 'over the maximum', value: String((s.maximum ?? 200) + 1) },
    { name: 'huge', value: '100000' },
    { name: 'overflow', value: '1e400' },
    { name: 'NUL', value: '%00' },
    { name: 'twice', value: '1&limit=2' },
  ],
  cursor: () => [
    { name: 'garbage', value: 'garbage!!' },
    { name: 'NUL', value: '%00' },
    { name: '600 characters', value: 'x'.repeat(600) },
    { name: 'an object', value: b64('{"a":1}') },
    { name: 'a number key', value: b64('[1]') },
    { name: 'three parts', value: b64('["a","b","c"]') },
    { name: 'NUL in the key', value: b64('["\\u0000"]') },
    { name: 'a date that is not one', value: b64('["not-a-date","usr_x"]') },
  ],
};

/** Values that break a query parameter's schema, for parameters other than limit and cursor. */
function queryValuesFrom(s: Schema): Array<{ name: string; value: string }> {
  const type = typeOf(s);
  const out: Array<{ name: string; value: string }> = [];
  if (type === 'integer' || type === 'number') {
    out.push({ name: 'word', value: 'abc' }, { name: 'overflow', value: '1e400' });
    if (s.maximum !== undefined)
      out.push({ name: 'over the maximum', value: String(s.maximum + 1) });
    if (s.minimum !== undefined)
      out.push({ name: 'under the minimum', value: String(s.minimum - 1) });
    if (type === 'integer') out.push({ name: 'fraction', value: '1.5' });
  } else if (s.anyOf || s.enum) {
    out.push(
      { name: 'not one of the values', value: 'zz-not-a-value' },
      { name: 'NUL', value: '%00' },
    );
  } else if (s.format === 'date-time') {
    out.push({ name: 'not a time', value: 'yesterday' }, { name: 'NUL', value: '%00' });
  } else if (type === 'string' && s.maxLength !== undefined) {
    out.push({ name: 'over-long', value: 'x'.repeat(s.maxLength + 1) });
  }
  return out;
}

function queryAttacks(r: Route): Attack[] {
  const list: Attack[] = [];
  for (const [q, schema] of Object.entries(r.query)) {
    for (const v of QUERY_VALUES[q]?.(schema) ?? queryValuesFrom(schema)) {
      list.push({
        name: `?${q} = ${v.name}`,
        query: `${q}=${v.value}`,
        json: r.body ? validBody : undefined,
        check: (res) => expectErrorAt(res, q),
      });
    }
  }
  // Parameters the route does not know: ignored or refused, never a crash.
  list.push({
    name: 'unknown query parameters',
    query: `zz=%00&__proto__=1&limit[]=1`,
    json: r.body ? validBody : undefined,
    check: () => {},
  });
  return list;
}

function attacksFor(r: Route): Attack[] {
  return [...(takesBody(r) ? bodyAttacks(r) : []), ...pathAttacks(r), ...queryAttacks(r)];
}

// "@team_id" in a param override means: that other real id.
const resolveOverrides = (w: World, o?: Record<string, string>) =>
  o &&
  Object.fromEntries(
    Object.entries(o).map(([k, v]) => [
      k,
      v.startsWith('@') ? must(w.ids, v.slice(1), 'world ids') : v,
    ]),
  );

// ---------------------------------------------------------------------------------------------

describe('the route list', () => {
  it('comes from the OpenAPI document and covers the API', () => {
    const names = ROUTES.map(label);
    expect(names).toContain('POST /v2/teams');
    expect(names).toContain('PATCH /v2/teams/{team_id}/members/{user_id}');
    expect(names).toContain('POST /v2/teams/invitations/{token}/accept');
    expect(ROUTES.length).toBeGreaterThanOrEqual(40);
  });

  it('snapshots the tables the API writes', () => {
    for (const name of [
      'users',
      'teams',
      'team_members',
      'invitations',
      'grants',
      'projects',
      'spaces',
      'emails',
      'audit_events',
      'access_tokens',
    ]) {
      expect(TABLES).toContain(name);
    }
  });

  it('the snapshot sees an insert, an update and a delete, and ignores last_used_at', async () => {
    const w = await getWorld();
    const s0 = await snapshot();
    await t.db
      .updateTable('teams')
      .set({ name: 'Renamed by the snapshot test' })
      .where('id', '=', must(w.ids, 'team_id', 'world ids'))
      .execute();
    const s1 = await snapshot();
    expect(s1.teams).not.toEqual(s0.teams);
    expect(s1.teams!.rows).toBe(s0.teams!.rows);
    await t.db.updateTable('access_tokens').set({ last_used_at: new Date() }).execute();
    expect(await snapshot()).toEqual(s1);
    const extra = await newUser(t, 'snapshot');
    const s2 = await snapshot();
    expect(s2.users!.rows).toBe(s1.users!.rows + 1);
    await t.db.deleteFrom('access_tokens').where('user_id', '=', extra.id).execute();
    await t.db.deleteFrom('users').where('id', '=', extra.id).execute();
    expect((await snapshot()).users).toEqual(s1.users);
    world = undefined;
  });

  it('has a real id for every path parameter (extend buildWorld() for new kinds)', () => {
    const missing = [...new Set(ROUTES.flatMap((r) => r.params))].filter(
      (p) => !KNOWN_PARAMS.includes(p),
    );
    expect(missing).toEqual([]);
  });
});

describe('a route that does not exist', () => {
  const cases: Array<[string, string, Omit<Attack, 'name' | 'check'>]> = [
    ['GET', '/v2/no-such-thing', {}],
    ['POST', '/v2/no-such-thing', { json: () => ({ name: 'a' }) }],
    ['DELETE', '/v2/teams/team_01/no-such-thing', { json: () => ({ zz: 1 }) }],
    ['PATCH', '/v2/user/no-such-thing', { raw: '[1, 2]' }],
  ];
  for (const [method, path, a] of cases) {
    it(`${method} ${path} → 404 route_not_found, whatever the body`, async () => {
      const r: Route = { method, path, params: [], query: {}, scheme: 'bearer' };
      await send(r, {
        name: 'no such route',
        ...a,
        check: (res) => expectStatus(res, 404, 'route_not_found'),
      });
    });
  }
});

describe('a method that a path does not take', () => {
  const cases: Array<[string, string, string, Omit<Attack, 'name' | 'check'>]> = [
    ['PUT', '/v2/projects', 'GET, HEAD, POST', { json: () => ({ name: 'a' }) }],
    ['DELETE', '/v2/user', 'GET, HEAD', { json: () => ({ zz: 1 }) }],
    ['POST', '/v2/user/tokens/tok_01', 'DELETE', { raw: '[1, 2]' }],
  ];
  for (const [method, path, allow, a] of cases) {
    it(`${method} ${path} → 405 method_not_allowed, Allow: ${allow}, whatever the body`, async () => {
      const r: Route = { method, path, params: [], query: {}, scheme: 'bearer' };
      await send(r, {
        name: 'wrong method',
        ...a,
        check: (res) => {
          expectStatus(res, 405, 'method_not_allowed');
          expect(res.headers.allow).toBe(allow);
        },
      });
    });
  }
});

for (const r of ROUTES) {
  describe(label(r), () => {
    for (const a of attacksFor(r)) {
      it(a.name, async () => {
        const w = await getWorld();
        await send(r, { ...a, params: resolveOverrides(w, a.params) });
      });
    }
  });
}
