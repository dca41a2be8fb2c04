// Schemas shared by every route: the problem body, list envelopes, pagination, timestamps.
import { Type, type Static, type TSchema } from 'typebox';
import { isoString } from '../db/timestamps.ts';

// No anyOf in what we answer: fast-json-stringify picks an anyOf branch by running a validator
// over each branch, for every value of every answer (a frame spent more on that than on writing
// itself, a date-time regex included). A choice of strings is an enum and a nullable value has
// `type: [t, "null"]`; both are JSON Schema 2020-12, which OpenAPI 3.1 uses as it is.

/** One of a few strings. Also for requests: Ajv then reports one error, not one per choice. */
type EnumOptions = { description?: string; [annotation: `x-${string}`]: string };
export const StringEnum = <const V extends readonly string[]>(values: V, o: EnumOptions = {}) =>
  Object.assign(Type.Unsafe<V[number]>({ enum: [...values], ...o }), { type: 'string' as const });

/** A value of `t` (a schema with one `type`) or null, for answers. An enum gets null among
 *  its values too, or the document would refuse the null that `type` allows. */
export const Nullable = <T extends TSchema & { type: string }>(t: T) => {
  const values = (t as { enum?: unknown[] }).enum;
  return Type.Unsafe<Static<T> | null>({
    ...t,
    type: [t.type, 'null'],
    ...(values ? { enum: [...values, null] } : {}),
  });
};

// Annotations that word a field's validation errors (read by validation-messages.ts; Ajv knows
// them as keywords that validate nothing; OpenAPI 3.1 allows `x-` keys in a schema).
export const ERROR_MESSAGE = 'x-error-message';
export const ERROR_CODE = 'x-error-code';

/** Schema options: every validation error of the field reads `message`, and the answer's code
 *  is `code` when nothing else is wrong with the request. */
export const errorWording = (message: string, code?: string) => ({
  [ERROR_MESSAGE]: message,
  ...(code ? { [ERROR_CODE]: code } : {}),
});

/** One of a few strings or null, for answers (null is part of the enum, as JSON Schema wants). */
export const NullableEnum = <const V extends readonly string[]>(
  values: V,
  options: { description?: string } = {},
) =>
  Type.Unsafe<V[number] | null>({ enum: [...values, null], type: ['string', 'null'], ...options });

/** A whole commit id (SHA-1, or SHA-256), as a deploy of a given commit takes. */
export const FULL_COMMIT_PATTERN = '^[0-9a-f]{40}([0-9a-f]{24})?$';

/** Messages for `pattern` errors, by pattern, so that a refusal says what to send rather than
 *  printing a regex (validation-messages.ts puts them in place of Ajv's). Every pattern of a
 *  request body or query has one here (test/http/error-messages.test.ts checks). */
export const PATTERN_MESSAGES = new Map<string, string>([
  [
    '^[a-z0-9]+(-[a-z0-9]+)*$',
    'must be lowercase letters and digits, words joined by single ' +
      'dashes (e.g. "web-team"): no capitals, spaces or underscores, no dash at either end',
  ],
  [
    '^[A-Za-z_][A-Za-z0-9_]*$',
    'must be letters, digits and underscores, not starting with a digit ' + '(e.g. "DATABASE_URL")',
  ],
  [
    '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$',
    'must be lowercase letters, digits and dashes, ' +
      'starting and ending with a letter or digit (e.g. "data")',
  ],
  ['^[A-Za-z0-9._-]+$', 'must be letters, digits, ".", "_" and "-" only (e.g. "my-app")'],
  [
    '^(?![-/])(?!.*\\.\\.)(?!.*//)[A-Za-z0-9._/+-]+(?<![/.])$',
    'must be a git branch name ' +
      '(e.g. "main" or "release/1.2"): letters, digits and . _ / + -, not starting with "-" ' +
      'or "/", not ending with "/" or ".", without ".." or "//"',
  ],
  ['^[0-9a-f]{7,64}$', 'must be a commit hash: 7 to 64 lowercase hexadecimal digits'],
  ['^sha256:[0-9a-f]{64}$', 'must be an image id: "sha256:" and 64 lowercase hexadecimal digits'],
  [
    FULL_COMMIT_PATTERN,
    'must be a full commit hash: 40 lowercase hexadecimal digits (64 for a SHA-256 repository)',
  ],
]);

// C0 and C1 controls (TAB, LF, CR included), DEL, the Unicode line and paragraph separators, and
// the bidirectional marks, embeddings, overrides and isolates: none belongs in a name, and each can
// forge a line or reorder text where the name is shown (an e-mail, a log line, a terminal).
export const PLAIN_TEXT_PATTERN =
  '^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]*$';
PATTERN_MESSAGES.set(
  PLAIN_TEXT_PATTERN,
  'must be one line of plain text: send it without line breaks, tabs or other control ' +
    'characters (U+0000-U+001F, U+007F-U+009F, U+2028, U+2029, bidirectional controls)',
);

/** A name a person sets and others read: user, team, project, space, frame, agent, token. */
export const PlainName = (o: { minLength?: number; maxLength: number }) =>
  Type.String({
    minLength: o.minLength ?? 1,
    maxLength: o.maxLength,
    pattern: PLAIN_TEXT_PATTERN,
    description:
      'One line of text: no control characters (line breaks, tabs), no U+2028/U+2029, no bidirectional controls',
  });

// The e-mail addresses the server takes: ajv-formats' `email` (validation.ts), written out as
// a pattern so that the document says it. JSON Schema's `format: email` alone allows more (RFC
// 5321 mailboxes such as `0@com`, quoted local parts, IP literals) than the server accepts.
export const EMAIL_PATTERN =
  "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*" +
  '@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$';
PATTERN_MESSAGES.set(
  EMAIL_PATTERN,
  'must be an e-mail address like ada@example.com: letters, digits and ' +
    "!#$%&'*+/=?^_`{|}~- before the @ (dots only between them), and after it a domain of two " +
    'or more labels of letters, digits and "-"',
);

/** An e-mail address a person types: up to 254 characters, see EMAIL_PATTERN. */
export const Email = Type.String({
  format: 'email',
  pattern: EMAIL_PATTERN,
  minLength: 3,
  maxLength: 254,
});

export const Timestamp = Type.String({ format: 'date-time', description: 'RFC 3339, UTC' });
export const NullableTimestamp = Nullable(Timestamp);

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable snake_case error name' }),
    request_id: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

/** Error answers every route may give; referenced by name in the OpenAPI document. */
export const problemResponses = {
  '4xx': Type.Ref('Problem'),
  '5xx': Type.Ref('Problem'),
};

/** A page of `item`s: every list answer has this envelope. The OpenAPI document names it after
 *  its item (`TeamList` for a `$ref` to Team or an item titled Team) and shows the shared
 *  `ListEnvelope` in it. */
export const ListOf = <T extends TSchema>(item: T) => {
  const { $ref, title } = item as { $ref?: string; title?: string };
  const name = $ref ?? title;
  return Type.Object(
    { data: Type.Array(item), next_cursor: Nullable(Type.String()) },
    name ? { title: `${name}List` } : {},
  );
};

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
});

/** An id in a path. Malformed ids are simply not found (the error handler maps params to 404). */
export const IdParam = (prefix: string) =>
  Type.String({ maxLength: 64, pattern: `^${prefix}_[0-9A-Za-z]{1,58}$` });

export const NoContent = Type.Null({ description: 'No content' });

// Keyset pagination lives in src/paging.ts (the db layer and services use it too).

export const iso = (d: Date | string) => isoString(d instanceof Date ? d : new Date(d));
export const isoOrNull = (d: Date | string | null) => (d === null ? null : iso(d));
