// A fuzz run generated from GET /v2/openapi.json: thousands of requests with random and hostile
// bodies, path values, query strings and headers, on every operation (fast-check, values shaped
// by each operation's JSON schema or hostile). Every request is one that must be refused:
// - as an outsider (signed in, but reaching none of the world's resources), on routes that name
//   a resource, and on reads;
// - with credentials that must not work (none, junk, revoked, expired, an agent's on user routes,
//   a user's on agent and operator routes);
// - with the right credentials but a body no route accepts (an unknown field, not an object,
//   not JSON).
// Required: no 5xx; every error is problem+json with `status` equal to the HTTP status and a
// snake_case `code`; no stack trace or source path in any answer; and the database unchanged
// (row counts and content digests of every table; idempotency records of refusals excepted).
import { afterAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { sql } from 'kysely';
import { testApp } from '../helpers/app.ts';
import {
  buildWorld,
  fill,
  missingId,
  PARAM_PREFIX,
  routesOf,
  type Route,
} from '../helpers/world.ts';
import {
  contentType,
  extraHeaders,
  fromSchema,
  hostilePathValue,
  hostileValue,
  mutated,
  queryString,
  refusedBody,
} from './generators.ts';
import { report } from '../faults/helpers/service.ts';
import { at } from '../helpers/checked.ts';
import { conformance } from '../helpers/openapi-conformance.ts';

const t = await testApp();
afterAll(async () => {
  await t.close();
});

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 5000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
const CONCURRENCY = 4;

const DOC = (await t.get('/v2/openapi.json')).json;
const ROUTES = routesOf(DOC);
// Every answer is also checked against the document: status, content type, body.
const documented = conformance(DOC);
const world = await buildWorld(t);

// ---------------------------------------------------------------------------------------------
// The database's state: per table, the row count and a digest of the content, without the
// bookkeeping that refused requests legitimately move (rate-limit counters count failed logins;
// last_used_at / last_seen_at move on every authenticated call; the clock is the operator's).

const NOT_STATE = new Set([
  'rate_limits',
  'service_clock',
  'idempotency_keys',
  'schema_migrations',
]);
const VOLATILE = ['last_used_at', 'last_seen_at'];

async function snapshot(): Promise<Record<string, string>> {
  const { rows: tables } = await sql<{
    name: string;
  }>`select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(t.db);
  const out: Record<string, string> = {};
  for (const { name } of tables.filter((x) => !NOT_STATE.has(x.name))) {
    const { rows } = await sql<{ n: number; h: string }>`select count(*)::int as n,
      coalesce(sum(hashtextextended((to_jsonb(x) ${sql.raw(VOLATILE.map((c) => `- '${c}'`).join(' '))})::text, 0)), 0)::text as h
      from ${sql.table(name)} x`.execute(t.db);
    out[name] = `${at(rows, 0).n} rows, digest ${at(rows, 0).h}`;
  }
  const { rows: jobs } = await sql<{
    n: number;
  }>`select count(*)::int as n from graphile_worker.jobs`.execute(t.db);
  out['graphile_worker.jobs'] = `${at(jobs, 0).n} rows`;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Requests.

interface Req {
  route: string;
  mode: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** Whether an outsider's request on this route is refused whatever its body: it names a resource of the world, or it reads. */
const outsiderRefused = (r: Route) =>
  r.method === 'GET' || (r.params.length > 0 && r.scheme !== 'none');
/** Whether junk credentials refuse the request whatever its body: the route checks them. */
const credentialsChecked = (r: Route) =>
  r.scheme === 'bearer' || r.scheme === 'agent' || r.scheme === 'operator';

function pathValues(r: Route, real: boolean): fc.Arbitrary<Record<string, string>> {
  if (r.params.length === 0) return fc.constant({});
  return fc
    .tuple(
      ...r.params.map((p) => {
        const options: fc.Arbitrary<string>[] = [fc.constant(missingId(p)), hostilePathValue];
        const id = world.ids[p];
        if (id) options.unshift(fc.constant(id), fc.constant(id));
        // A real id of another kind.
        if (PARAM_PREFIX[p]) options.push(fc.constantFrom(...Object.values(world.ids)));
        return real && id ? fc.constant(id) : fc.oneof(...options);
      }),
    )
    .map((vs) => Object.fromEntries(r.params.map((p, i) => [p, at(vs, i)])));
}

/** Credentials that must be refused on a route that checks them. */
function badCredentials(r: Route): fc.Arbitrary<string | undefined> {
  const tk = world.tokens;
  const common = [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    'Bearer junk',
    `Basic ${Buffer.from('a:b').toString('base64')}`,
    `Bearer ${'x'.repeat(600)}`,
    `Bearer ${tk.revoked}`,
    `bearer ${tk.revoked}`,
    `Bearer ${tk.expired}`,
    `Bearer ${tk.revoked} extra`,
    `Token ${world.owner.token}`,
    `Bearer  ${world.owner.token}x`,
  ];
  const wrongKind =
    r.scheme === 'agent'
      ? [`Bearer ${world.owner.token}`, `Bearer ${tk.admin}`]
      : r.scheme === 'operator'
        ? [`Bearer ${world.owner.token}`, `Bearer ${tk.agent}`, `Bearer ${tk.admin}x`]
        : [`Bearer ${tk.agent}`, `Bearer ${tk.admin}`];
  return fc.constantFrom(...common, ...wrongKind);
}

function goodCredentials(r: Route) {
  return `Bearer ${r.scheme === 'operator' ? world.tokens.admin : r.scheme === 'agent' ? world.tokens.agent : world.owner.token}`;
}

function requestFor(r: Route): fc.Arbitrary<Req> {
  const takesBody = r.method !== 'GET';
  const anyBody: fc.Arbitrary<string | undefined> = takesBody
    ? fc.oneof(
        fromSchema(r.body).map((v) => JSON.stringify(v)),
        mutated(r.body).map((v) => JSON.stringify(v)),
        hostileValue.map((v) => JSON.stringify(v)),
        refusedBody(r.body),
        fc.constant(undefined),
      )
    : fc.constant(undefined);
  type Plan = {
    mode: string;
    auth: fc.Arbitrary<string | undefined>;
    body: fc.Arbitrary<string | undefined>;
    real: boolean;
  };
  const plans: Plan[] = [];
  if (outsiderRefused(r))
    plans.push({
      mode: 'outsider',
      auth: fc.constant(`Bearer ${world.outsider.token}`),
      body: anyBody,
      real: false,
    });
  else if (takesBody)
    plans.push({
      mode: 'outsider, refused body',
      auth: fc.constant(`Bearer ${world.outsider.token}`),
      body: refusedBody(r.body),
      real: false,
    });
  if (credentialsChecked(r))
    plans.push({ mode: 'bad credentials', auth: badCredentials(r), body: anyBody, real: false });
  else if (takesBody)
    plans.push({
      mode: 'bad credentials, refused body',
      auth: badCredentials(r),
      body: refusedBody(r.body),
      real: false,
    });
  if (takesBody)
    plans.push({
      mode: 'owner, refused body',
      auth: fc.constant(goodCredentials(r)),
      body: refusedBody(r.body),
      real: true,
    });
  if (!takesBody && r.scheme === 'none')
    plans.push({
      mode: 'anonymous read',
      auth: fc.constant(undefined),
      body: fc.constant(undefined),
      real: false,
    });

  return fc.constantFrom(...plans).chain((plan) =>
    fc
      .record({
        auth: plan.auth,
        body: plan.body,
        params: pathValues(r, plan.real),
        query: queryString(r.query),
        type: contentType,
        extra: extraHeaders,
      })
      .map(({ auth, body, params, query, type, extra }) => {
        const headers: Record<string, string> = { ...extra };
        if (auth !== undefined) headers.authorization = auth;
        if (type !== undefined && (body !== undefined || type === ''))
          headers['content-type'] = type;
        else if (body !== undefined) headers['content-type'] = 'application/json';
        const url = fill(r, params) + (query ? `?${query}` : '');
        return {
          route: `${r.method} ${r.path}`,
          mode: plan.mode,
          method: r.method,
          url,
          headers,
          payload: body,
        };
      }),
  );
}

// ---------------------------------------------------------------------------------------------
// Checks.

const STACK =
  /\n\s+at\s|\bat\s+\S+\s+\(?[^\s)]*:\d+:\d+\)?|\/src\/|node_modules|file:\/\/|\.ts:\d+|\bError: /;

interface Outcome {
  req: Req;
  status: number;
  type: string;
  body: string;
  ms: number;
  problems: string[];
}

function check(req: Req, status: number, type: string, body: string): string[] {
  const problems: string[] = [];
  if (status >= 500) problems.push(`5xx (${status})`);
  // Reads may succeed (the outsider's own user, lists of what they reach, health); nothing else may.
  if (status < 400 && req.method !== 'GET')
    problems.push(`accepted (${status}) a request that must be refused`);
  if (STACK.test(body)) problems.push('a stack trace or source path in the answer');
  problems.push(
    ...documented.check({ method: req.method, url: req.url, status, contentType: type, body }),
  );
  if (status >= 400) {
    if (!type.startsWith('application/problem+json')) problems.push(`content-type ${type}`);
    let json: any;
    try {
      json = JSON.parse(body);
    } catch {
      problems.push('body is not JSON');
    }
    if (json) {
      if (json.status !== status) problems.push(`body status ${json.status} ≠ ${status}`);
      if (typeof json.code !== 'string' || !/^[a-z][a-z0-9_]*$/.test(json.code))
        problems.push(`code ${JSON.stringify(json.code)}`);
    }
  }
  return problems;
}

async function send(req: Req): Promise<Outcome> {
  const started = performance.now();
  try {
    const res = await t.app.inject({
      method: req.method as 'GET',
      url: req.url,
      headers: req.headers,
      payload: req.payload,
    });
    const type = String(res.headers['content-type'] ?? '');
    return {
      req,
      status: res.statusCode,
      type,
      body: res.body,
      ms: performance.now() - started,
      problems: check(req, res.statusCode, type, res.body),
    };
  } catch (err) {
    // inject itself refused the request (a header value Node would not send): not the service's doing.
    return {
      req,
      status: -1,
      type: '',
      body: String(err),
      ms: performance.now() - started,
      problems: [],
    };
  }
}

// ---------------------------------------------------------------------------------------------

describe(`fuzz: ${TOTAL} hostile requests over every operation of /v2/openapi.json (seed ${SEED})`, () => {
  it('never 5xx, always problem+json with status and code, no stack traces, no state change', async () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(60);
    const perRoute = Math.ceil(TOTAL / ROUTES.length);
    const requests = ROUTES.flatMap((r, i) =>
      fc.sample(requestFor(r), { numRuns: perRoute, seed: SEED + i }),
    );
    // Interleave routes, so that a refusal of one cannot hide behind a quiet spell.
    const order = requests
      .map((q, i) => ({ q, k: (i * 7919) % requests.length }))
      .sort((x, y) => x.k - y.k)
      .map((x) => x.q);

    const before = await snapshot();
    const idempotencyBefore = at(
      (await sql<{ n: number }>`select count(*)::int as n from idempotency_keys`.execute(t.db))
        .rows,
      0,
    ).n;
    const started = performance.now();
    const outcomes: Outcome[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < order.length) outcomes.push(await send(at(order, next++)));
      }),
    );
    const elapsed = performance.now() - started;
    const after = await snapshot();

    const sent = outcomes.filter((o) => o.status !== -1);
    const failures = sent.filter((o) => o.problems.length > 0);
    const byStatus: Record<number, number> = {};
    for (const o of sent) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
    const byMode: Record<string, number> = {};
    for (const o of sent) byMode[o.req.mode] = (byMode[o.req.mode] ?? 0) + 1;
    const newIdempotency = await sql<{
      status: number | null;
    }>`select status from idempotency_keys`.execute(t.db);
    report('fuzz', {
      seed: SEED,
      requests: outcomes.length,
      not_sendable_by_inject: outcomes.length - sent.length,
      seconds: +(elapsed / 1000).toFixed(1),
      routes: ROUTES.length,
      statuses: byStatus,
      modes: byMode,
      failures: failures.length,
      slowest_ms: Math.round(Math.max(...sent.map((o) => o.ms))),
      idempotency_records_of_refusals: newIdempotency.rows.length - idempotencyBefore,
    });

    const examples = failures
      .slice(0, 15)
      .map(
        (o) =>
          `${o.problems.join('; ')} — ${o.req.mode}: ${o.req.method} ${o.req.url.slice(0, 150)} ${JSON.stringify(o.req.headers).slice(0, 200)} body=${(o.req.payload ?? '').slice(0, 100)} → ${o.status} ${o.body.slice(0, 200)}`,
      );
    expect(examples, `${failures.length} failing answers (replay with FUZZ_SEED=${SEED})`).toEqual(
      [],
    );
    expect(after, 'refused requests changed the database').toEqual(before);
    // Idempotency-Key records of refused requests are by design (4xx answers are replayed); never of a success.
    expect(newIdempotency.rows.filter((r) => r.status !== null && r.status < 400)).toEqual([]);
    expect(sent.length).toBeGreaterThanOrEqual(TOTAL * 0.95);
    expect(elapsed, 'the run stays bounded').toBeLessThan(150_000);
  }, 180_000);
});
