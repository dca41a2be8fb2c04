// fast-check arbitraries for the fuzz test: values shaped by an operation's JSON schema (so
// that they get past the first checks and reach deeper code), hostile values of every type,
// and the hostile parts of a request (path values, query strings, headers, raw bodies).
import fc from 'fast-check';
import type { Schema } from '../helpers/world.ts';

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\t',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202e\u202d',
  'İı',
  'ǅ',
  '😀'.repeat(40),
  'x'.repeat(300),
  'x'.repeat(5000),
  "' OR '1'='1' --",
  '"; drop table users; --',
  '<script>alert(1)</script>',
  '../../../../etc/passwd',
  '%00',
  '%ZZ',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log4j lookup string, sent as is
  '${jndi:ldap://x/a}',
  '{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e999',
  'usr_',
  'prj_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  'owner',
  'admin',
  'Online',
  '/',
  '/proc/self',
  'a@b',
  'UPPER@EXAMPLE.TEST',
  'ü@ä.example',
  '\r\nx-injected: 1',
];
const HOSTILE_NUMBERS = [
  0,
  -0,
  -1,
  1.5,
  0.1,
  65535,
  65536,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
];

export const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
);
export const hostileNumber = fc.oneof(
  fc.constantFrom(...HOSTILE_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const hostileKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '',
    'a.b',
    '$gt',
    'role',
    'owner_id',
  ),
  fc.string({ maxLength: 12 }),
);

/** Any JSON value, nested a little, with hostile leaves and keys. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(hostileKey, tie('v'), { maxKeys: 4 }),
  ),
})).v;

function stringFor(s: Schema): fc.Arbitrary<string> {
  if (s.format === 'email') return fc.emailAddress();
  if (s.format === 'date-time')
    return fc
      .date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString());
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 40, 80);
  if (s.pattern) {
    try {
      return fc
        .stringMatching(new RegExp(s.pattern))
        .filter((v) => v.length >= min && v.length <= (s.maxLength ?? Infinity));
    } catch {
      /* a pattern fast-check cannot generate from: plain strings */
    }
  }
  return fc.string({ minLength: min, maxLength: Math.max(min, max) });
}

/** Values that follow the schema (mostly valid; patterns and formats approximately). */
export function fromSchema(s: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 4) return hostileValue;
  if (s.anyOf || s.oneOf)
    return fc.oneof(...(s.anyOf ?? s.oneOf).map((x: Schema) => fromSchema(x, depth + 1)));
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  switch (s.type) {
    case 'string':
      return stringFor(s);
    case 'integer':
      return fc.integer({
        min: Math.max(s.minimum ?? -1e9, -1e9),
        max: Math.min(s.maximum ?? 1e9, 1e9),
      });
    case 'number':
      return fc.double({
        min: s.minimum ?? -1e9,
        max: s.maximum ?? 1e9,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fromSchema(s.items, depth + 1), { maxLength: Math.min(s.maxItems ?? 4, 4) });
    case 'object': {
      const props = Object.entries<Schema>(s.properties ?? {});
      const record = fc.record(
        Object.fromEntries(props.map(([k, v]) => [k, fromSchema(v, depth + 1)])),
        { requiredKeys: (s.required ?? []) as never[] },
      );
      const each =
        Object.values<Schema>(s.patternProperties ?? {})[0] ??
        (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
      if (!each) return record;
      const extra = fc.dictionary(
        fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,20}$/),
        fromSchema(each, depth + 1),
        { maxKeys: 4 },
      );
      return fc.tuple(record, extra).map(([a, b]) => ({ ...b, ...(a as object) }));
    }
    default:
      return hostileValue;
  }
}

/** The schema's shape with one or two fields replaced by hostile values, or added unknown ones. */
export function mutated(s: Schema | undefined): fc.Arbitrary<unknown> {
  const names = Object.keys(s?.properties ?? {});
  return fc
    .tuple(
      fromSchema(s),
      fc.array(
        fc.tuple(
          names.length ? fc.oneof(fc.constantFrom(...names), hostileKey) : hostileKey,
          hostileValue,
        ),
        { minLength: 1, maxLength: 2 },
      ),
    )
    .map(([base, changes]) => {
      const out: Record<string, unknown> =
        base && typeof base === 'object' && !Array.isArray(base) ? { ...(base as object) } : {};
      for (const [k, v] of changes)
        Object.defineProperty(out, k, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return out;
    });
}

/** Bodies that no route accepts, whatever the content type: an unknown field, or not a JSON object. */
export function refusedBody(s: Schema | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    // An unknown field (CONTRACT 1: refused with 422), in an otherwise plausible body.
    fc.tuple(fromSchema(s), fc.stringMatching(/^[a-z]{3,10}$/), hostileValue).map(([base, k, v]) =>
      JSON.stringify({
        ...(base && typeof base === 'object' && !Array.isArray(base) ? (base as object) : {}),
        [`zz_${k}`]: v,
      }),
    ),
    fc
      .tuple(mutated(s), fc.stringMatching(/^[a-z]{3,10}$/))
      .map(([b, k]) => JSON.stringify({ ...(b as object), [`zz_${k}`]: 1 })),
    // Not an object.
    fc
      .oneof(fc.array(hostileValue, { maxLength: 3 }), hostileString, hostileNumber, fc.boolean())
      .map((v) => JSON.stringify(v)),
    // Not JSON at all (never empty: an empty body counts as no body).
    fc.constantFrom(
      '{',
      '{"a":',
      "{'name': 'a'}",
      'nul',
      '[1,]',
      '{"a":1}}',
      '\u0000',
      'name=a&slug=b',
      '<x/>',
      '{"a":"\\ud800"',
      '\\',
      '\ufeff{}x',
    ),
    fc.integer({ min: 20, max: 20_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
    fc.integer({ min: 20, max: 20_000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
  );
}

export const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json;charset=utf-16',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'application/octet-stream',
  'application/problem+json',
  'application/merge-patch+json',
  'application/vnd.api+json',
  '',
  '*/*',
  'application/json, text/plain',
  ';',
  'application/json; boundary=',
  'application/jsonx',
);

export const extraHeaders = fc.record(
  {
    'idempotency-key': fc.constantFrom(
      '',
      ' ',
      'k-1',
      'x'.repeat(256),
      'é',
      'a b',
      '\t',
      '..',
      '%00',
      'k'.repeat(255),
    ),
    accept: fc.constantFrom(
      'text/event-stream',
      '*/*',
      'application/xml',
      'text/html',
      'application/json;q=0',
      'text/event-stream, application/json',
    ),
    'x-request-id': fc.constantFrom('abc', 'x'.repeat(100), '<script>', '../../', 'req_1', ''),
    'if-match': fc.constantFrom('*', '"junk"', 'W/"x"', '"frm_x.v1"', ''),
    'last-event-id': fc.constantFrom('evt_x', '%00', 'x'.repeat(300), '-1'),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'junk, 1.1.1.1', '::1'),
    'content-encoding': fc.constantFrom('gzip', 'br', 'identity', 'junk'),
    'accept-encoding': fc.constantFrom('gzip', 'br', '*', 'junk'),
  },
  { requiredKeys: [] },
);

/** Path segment values: already percent-encoded where they need to be. */
export const hostilePathValue = fc.oneof(
  fc.constantFrom(
    'garbage',
    '%00',
    'team_01%00',
    '..%2F..%2Fv2%2Fuser',
    'x'.repeat(600),
    '%ZZ',
    '%F0%9F%92%A9',
    "'%20OR%20'1'%3D'1",
    '%E2%80%AE',
    'null',
    '0',
    '-1',
    '1e9',
    '%20',
    'usr_',
    `prj_${'A'.repeat(70)}`,
    '%ED%A0%80',
  ),
  hostileString.map((v) => encodeURIComponent(v.replace(/[\ud800-\udfff]/g, 'x'))),
);

/** A query string: the operation's parameters with shaped or hostile values, and unknown ones. */
export function queryString(query: Record<string, Schema>): fc.Arbitrary<string> {
  const entries = Object.entries(query);
  const value = (s: Schema) =>
    fc.oneof(
      fromSchema(s).map((v) => String(v)),
      hostileString,
      hostileNumber.map(String),
    );
  const known = entries.length
    ? fc.array(
        fc
          .constantFrom(...entries)
          .chain(([k, s]) =>
            value(s).map((v) => `${k}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, 'x'))}`),
          ),
        { maxLength: 3 },
      )
    : fc.constant([] as string[]);
  const unknown = fc.array(
    fc.constantFrom(
      'zz=%00',
      '__proto__[x]=1',
      'limit[]=1',
      'cursor=%ZZ',
      'a=b=c',
      '&&',
      'wait=30',
      'timeout=60',
    ),
    { maxLength: 2 },
  );
  return fc.tuple(known, unknown).map(([k, u]) => [...k, ...u].join('&'));
}
