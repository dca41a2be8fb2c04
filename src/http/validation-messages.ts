// The one place where Ajv's errors become the field errors of a 422: each message says what to
// send, in words, never as a regex or "must NOT be valid". Ajv runs with `verbose`
// (validation.ts), so every error carries the schema it broke (`parentSchema`), where the
// annotations below live:
//   x-error-message  replaces every message of that schema (e.g. a role that may not be owner)
//   x-error-code     the problem's `code` when every error of a request carries the same one
// A `pattern` is described by PATTERN_MESSAGES, else by the schema's description.
import type { FieldError } from '../errors.ts';
import { ERROR_CODE, ERROR_MESSAGE, PATTERN_MESSAGES } from './schemas.ts';

export interface AjvIssue {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
  propertyName?: string;
  schema?: unknown;
  parentSchema?: Schema;
  data?: unknown;
}
type Schema = Record<string, unknown>;
export interface MappedError extends FieldError {
  code?: string;
}

/** Field hints: a field that exists under another name in this request. */
const RENAMED_FIELDS: Record<string, string> = { git_repository: 'git_repository_name' };

const FORMATS: Record<string, string> = {
  email: 'an e-mail address',
  'date-time': 'an RFC 3339 date-time (e.g. 2026-01-31T12:00:00Z)',
  uri: 'an absolute URI',
  hostname: 'a host name',
  uuid: 'a UUID',
};

const pathOf = (pointer: string) => pointer.replace(/^\//, '').replace(/\//g, '.');
const join = (a: string, b: string) => (a ? `${a}.${b}` : b);
const article = (t: string) => (t === 'null' ? 'null' : /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);
const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** "a, b or c" */
export function orList(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function typeWords(type: unknown): string {
  return orList((Array.isArray(type) ? type : [type]).map((t) => article(String(t))));
}

/** "from 1 to 100", "at least 1", "at most 100", from a schema's two bounds. */
function range(min: unknown, max: unknown): string {
  if (typeof min === 'number' && typeof max === 'number') return `from ${min} to ${max}`;
  return typeof min === 'number' ? `at least ${min}` : `at most ${String(max)}`;
}

function countOf(min: unknown, max: unknown, unit: string, units = `${unit}s`): string {
  const n = typeof max === 'number' ? max : min;
  return `${range(min, max)} ${n === 1 ? unit : units}`;
}

/** What the value of one schema may be, in words, for a branch of anyOf/oneOf. */
function describe(s: Schema | undefined): string | undefined {
  if (!s) return undefined;
  if (Array.isArray(s.enum)) return `one of ${s.enum.map(show).join(', ')}`;
  if ('const' in s) return show(s.const);
  if (s.type !== undefined) return typeWords(s.type);
  return typeof s.description === 'string' ? s.description : undefined;
}

function notMessage(i: AjvIssue, s: Schema): string {
  const refused = (i.schema ?? s.not) as Schema | undefined;
  if (refused && Array.isArray(refused.enum)) {
    const bounded = s.minimum !== undefined || s.maximum !== undefined;
    const kind = s.type === 'integer' ? 'an integer' : 'a value';
    const what = bounded ? `${kind} ${range(s.minimum, s.maximum)}` : kind;
    const values = orList(refused.enum.map(show));
    return `must not be ${values} (reserved): send ${what} other than these`;
  }
  if (typeof s.description === 'string') return `is not allowed: send ${s.description}`;
  return 'is not allowed here';
}

function patternMessage(i: AjvIssue, s: Schema): string {
  const known = PATTERN_MESSAGES.get(String(i.params.pattern));
  if (known) return known;
  if (typeof s.description === 'string') return `must be: ${s.description}`;
  return 'has characters that are not allowed here';
}

/** The message of one error, from its keyword and the schema it broke. */
function messageOf(i: AjvIssue): string {
  const s = i.parentSchema ?? {};
  const p = i.params;
  switch (i.keyword) {
    case 'type':
      return `must be ${typeWords(p.type)}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map(show).join(', ')}`;
    case 'const':
      return `must be ${show(p.allowedValue)}`;
    case 'not':
      return notMessage(i, s);
    case 'pattern':
      return patternMessage(i, s);
    case 'format':
      return `must be ${FORMATS[String(p.format)] ?? `a valid ${String(p.format)}`}`;
    case 'minLength':
    case 'maxLength':
      return `must be ${countOf(s.minLength, s.maxLength, 'character')} long`;
    case 'minimum':
    case 'maximum':
      return `must be ${range(s.minimum, s.maximum)}`;
    case 'minItems':
    case 'maxItems':
      return `must have ${countOf(s.minItems, s.maxItems, 'item')}`;
    case 'minProperties': {
      // An empty PATCH body: name the fields it takes.
      const fields = Object.keys((s.properties ?? {}) as Schema);
      if (fields.length > 0) return `send at least one of: ${fields.join(', ')}`;
      return `must have ${countOf(s.minProperties, undefined, 'entry', 'entries')}`;
    }
    case 'maxProperties':
      return `must have ${countOf(undefined, s.maxProperties, 'entry', 'entries')}`;
    case 'multipleOf':
      return `must be a multiple of ${String(p.multipleOf)}`;
    case 'uniqueItems':
      return 'must not repeat an item';
    case 'anyOf':
    case 'oneOf': {
      const branches = ((s[i.keyword] ?? []) as Schema[]).map(describe);
      if (branches.some((b) => b === undefined)) return 'is not in any accepted form';
      return `must be ${orList([...new Set(branches as string[])])}`;
    }
    default:
      return i.message ?? 'is invalid';
  }
}

const within = (inner: AjvIssue, outer: AjvIssue) =>
  inner.schemaPath.startsWith(`${outer.schemaPath}/`) &&
  (inner.instancePath === outer.instancePath ||
    inner.instancePath.startsWith(`${outer.instancePath}/`));

/**
 * anyOf/oneOf: one error, not one per branch. When exactly one branch takes a value of this type
 * (say a string that is too long, where string or null is accepted), its errors are the useful
 * ones; otherwise the value fits no branch and one error says what the branches accept.
 * propertyNames: the errors of the name itself say more than "property name must be valid".
 */
function collapse(issues: AjvIssue[]): AjvIssue[] {
  let out = issues;
  for (const outer of issues) {
    if (!out.includes(outer)) continue;
    const inner = out.filter((i) => i !== outer && within(i, outer));
    if (outer.keyword === 'propertyNames' && inner.length > 0) {
      out = out.filter((i) => i !== outer);
    } else if ((outer.keyword === 'anyOf' || outer.keyword === 'oneOf') && inner.length > 0) {
      const base = outer.schemaPath;
      const branchOf = (i: AjvIssue) => i.schemaPath.slice(base.length + 1).split('/')[0] ?? '';
      const wrongType = (b: string) =>
        inner.some(
          (i) =>
            i.keyword === 'type' &&
            i.instancePath === outer.instancePath &&
            i.schemaPath === `${base}/${b}/type`,
        );
      const typeFits = [...new Set(inner.map(branchOf))].filter((b) => !wrongType(b));
      const keep = typeFits.length === 1 ? inner.filter((i) => branchOf(i) === typeFits[0]) : [];
      out = out.filter((i) => !inner.includes(i) || keep.includes(i));
      if (keep.length > 0) out = out.filter((i) => i !== outer);
    }
  }
  // A value outside an enum that is also of the wrong type: the list of values says it all.
  const parent = (i: AjvIssue) => i.schemaPath.slice(0, i.schemaPath.lastIndexOf('/'));
  return out.filter(
    (t) =>
      t.keyword !== 'type' ||
      !out.some(
        (e) => e.keyword === 'enum' && e.instancePath === t.instancePath && parent(e) === parent(t),
      ),
  );
}

/** Ajv's errors of one request part as field errors, each saying what to send. */
export function fieldErrorsOf(issues: AjvIssue[]): MappedError[] {
  const out: MappedError[] = [];
  for (const i of collapse(issues)) {
    const at = pathOf(i.instancePath);
    const s = i.parentSchema ?? {};
    const custom = typeof s[ERROR_MESSAGE] === 'string' ? (s[ERROR_MESSAGE] as string) : undefined;
    const code = typeof s[ERROR_CODE] === 'string' ? (s[ERROR_CODE] as string) : undefined;
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    if (i.keyword === 'additionalProperties') {
      const name = String(i.params.additionalProperty);
      const renamed = RENAMED_FIELDS[name];
      const fields = Object.keys(properties);
      const hint =
        renamed && fields.includes(renamed)
          ? `; did you mean "${renamed}"?`
          : fields.length > 0
            ? `; the fields are: ${fields.join(', ')}`
            : '; send no fields here';
      out.push({ path: join(at, name), message: `unknown field "${name}"${hint}` });
    } else if (i.keyword === 'required') {
      const name = String(i.params.missingProperty);
      const values = properties[name]?.enum;
      const which = Array.isArray(values) ? `: send one of ${values.map(show).join(', ')}` : '';
      out.push({ path: join(at, name), message: `is required${which}` });
    } else if (i.propertyName !== undefined) {
      out.push({ path: join(at, i.propertyName), message: `name ${custom ?? messageOf(i)}`, code });
    } else {
      out.push({ path: at, message: custom ?? messageOf(i), code });
    }
  }
  // Several keywords may report one problem (a wrong type breaks the enum too); keep it once.
  return out.filter(
    (e, n) => out.findIndex((x) => x.path === e.path && x.message === e.message) === n,
  );
}
