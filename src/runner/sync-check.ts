// Every item the agent reports is checked before it is queued (issue 34) against what the
// service accepts: the item schemas of the sync body (agent-api/sync-items.ts), compiled once
// here by Ajv with the options the service validates bodies with (http/validation.ts), and what
// the service's JSON parser refuses in any string or nesting (http/json-parser.ts). Values can
// come from files a tenant controls (a commit marker, an app's output), and one item the server
// refuses makes it refuse the whole report, other frames' events included. So an item that
// breaks a rule is repaired where that keeps its meaning, else refused alone, saying why.
import AjvModule, { type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import {
  BuildReportItem,
  COMMIT_SHA_PATTERN,
  MAX_BUILD_MESSAGE_CHARS,
  MAX_LINE_CHARS,
  SyncEventItem,
  SyncLogItem,
  SyncReplicaMetricItem,
  SyncRequestMetricItem,
} from '../agent-api/sync-items.ts';
import type { BuildReport, SyncEvent, SyncLog } from './protocol.ts';
import type { ReplicaMetric } from './metrics/deltas.ts';
import type { RequestMetric } from './edge/request-meter.ts';

// Both packages are CommonJS with a default export; ESM sees it under .default.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ??
  AjvModule) as typeof AjvModule.default;
const addFormats = ((formatsModule as unknown as { default?: unknown }).default ??
  formatsModule) as typeof formatsModule.default;

// As the service checks a body: no coercion, every error, annotations ignored.
const ajv = new Ajv({
  allErrors: true,
  coerceTypes: false,
  removeAdditional: false,
  strict: false,
});
addFormats(ajv);
const validEvent = ajv.compile<SyncEvent>(SyncEventItem);
const validBuild = ajv.compile<BuildReport>(BuildReportItem);
const validLog = ajv.compile<SyncLog>(SyncLogItem);
const validReplicaMetric = ajv.compile<ReplicaMetric>(SyncReplicaMetricItem);
const validRequestMetric = ajv.compile<RequestMetric>(SyncRequestMetricItem);

// What the service's JSON parser refuses anywhere in a body, keys included. With the u flag a
// valid surrogate pair is one code point: only unpaired halves match \p{Cs}.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused.
const BAD_CHARACTER = /[\u0000\p{Cs}]/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character replaced.
const BAD_CHARACTERS = /[\u0000\p{Cs}]/gu;
const MAX_DEPTH = 32;
/** How deep an item's own object sits in a body: `{events: [item]}`. */
const ITEM_DEPTH = 2;
/** Not a rule of the service: a bound that keeps one event well inside one request body. */
const MAX_DETAIL_BYTES = 16 * 1024;
const COMMIT_SHA = new RegExp(COMMIT_SHA_PATTERN);

/** An item as it may be sent (maybe repaired, saying what was wrong), or why it may not. */
export type Checked<T> = { item: T; repaired?: string } | { refused: string };

export function checkEvent(e: SyncEvent): Checked<SyncEvent> {
  return verdict(validEvent, e, repairEvent, detailProblem);
}

export function checkBuild(b: BuildReport): Checked<BuildReport> {
  return verdict(validBuild, b, repairBuild);
}

export function checkLog(l: SyncLog): Checked<SyncLog> {
  return verdict(validLog, l, (x) => {
    const p = plain(x);
    return { ...p, line: cut(p.line, MAX_LINE_CHARS) };
  });
}

/** A replica's sample: a reading the runtime got wrong (not a whole count, negative, not a
 *  number) is left out where it may be; the item goes without it. */
export function checkReplicaMetric(m: ReplicaMetric): Checked<ReplicaMetric> {
  return verdict(validReplicaMetric, m, (x) => {
    const out = { ...x };
    for (const k of COUNTS) {
      if (out[k] === undefined) continue;
      const n = Math.round(out[k] as number);
      if (Number.isSafeInteger(n) && n >= 0) out[k] = n;
      else delete out[k];
    }
    return out;
  });
}

export function checkRequestMetric(m: RequestMetric): Checked<RequestMetric> {
  return verdict(validRequestMetric, m, (x) => x);
}

const COUNTS = [
  'memory_bytes',
  'memory_limit_bytes',
  'net_rx_bytes',
  'net_tx_bytes',
  'restarts',
] as const;

function verdict<T>(
  valid: ValidateFunction<T>,
  item: T,
  repair: (item: T) => T,
  extra: (item: T) => string | undefined = () => undefined,
): Checked<T> {
  const problem = (x: T) =>
    parserProblem(x) ??
    extra(x) ??
    (valid(x) ? undefined : ajv.errorsText(valid.errors, { dataVar: '', separator: '; ' }));
  const why = problem(item);
  if (!why) return { item };
  const fixed = repair(item);
  const still = problem(fixed);
  return still ? { refused: still } : { item: fixed, repaired: why };
}

/** What the service's JSON parser would refuse in the item (walked without recursion). */
function parserProblem(item: unknown): string | undefined {
  const found = badPart(item, ITEM_DEPTH);
  if (found === 'depth') return `nested deeper than ${MAX_DEPTH} levels`;
  return found && 'a NUL character or an unpaired surrogate in a string or key';
}

/** The worst of what the parser refuses in a value that sits `from` levels deep in a body. */
function badPart(value: unknown, from: number): 'character' | 'depth' | undefined {
  let found: 'character' | undefined;
  const stack: Array<[unknown, number]> = [[value, from]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top;
    if (typeof v === 'string') {
      if (BAD_CHARACTER.test(v)) found = 'character';
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) return 'depth';
    for (const [k, x] of Object.entries(v)) {
      if (BAD_CHARACTER.test(k)) found = 'character';
      stack.push([x, depth + 1]);
    }
  }
  return found;
}

function detailProblem(e: SyncEvent): string | undefined {
  if (!e.detail) return undefined;
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(e.detail));
  } catch {
    return 'a detail that is not JSON'; // a cycle, a BigInt
  }
  return bytes > MAX_DETAIL_BYTES ? `a detail of ${bytes} bytes` : undefined;
}

/** A copy with the characters the service refuses replaced, in strings and keys. */
function plain<T>(value: T): T {
  if (typeof value === 'string') return value.replace(BAD_CHARACTERS, '\uFFFD') as T;
  if (Array.isArray(value)) return value.map(plain) as T;
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [plain(k), plain(v)])) as T;
}

/** At most `max` characters (code points, as the schema counts), marked where cut. */
function cut(s: string, max: number) {
  if (s.length <= max) return s;
  const chars = Array.from(s);
  return chars.length <= max ? s : `${chars.slice(0, max - 1).join('')}…`;
}

/** What the service reads of a detail (frames/sync-reports.ts): its reason and its message. */
function brief(detail: Record<string, unknown>) {
  const { reason, message } = detail;
  return {
    ...(typeof reason === 'string' ? { reason: cut(reason, 64) } : {}),
    ...(typeof message === 'string' ? { message: cut(message, MAX_BUILD_MESSAGE_CHARS) } : {}),
  };
}

function repairEvent(e: SyncEvent): SyncEvent {
  // A detail too deep or too big keeps what the service reads of it; the rest goes.
  const over = e.detail && (badPart(e.detail, ITEM_DEPTH + 1) === 'depth' || detailProblem(e));
  const detail = e.detail && over ? brief(e.detail) : e.detail;
  return plain({ ...e, ...(detail ? { detail } : {}) });
}

function repairBuild(b: BuildReport): BuildReport {
  const { commit_sha, message, ...rest } = plain(b);
  // A commit that is not a commit hash (read from a file the tenant controls) is left out: the
  // report still counts (a failed build fails its deployment); the server just does not learn it.
  return {
    ...rest,
    ...(commit_sha !== undefined && COMMIT_SHA.test(commit_sha) ? { commit_sha } : {}),
    ...(message !== undefined ? { message: cut(message, MAX_BUILD_MESSAGE_CHARS) } : {}),
  };
}
