// Opaque ids with a type prefix, sortable by creation time (a ULID after the prefix).
import { getRandomValues } from 'node:crypto';
import { decodeTime, monotonicFactory } from 'ulidx';

// ulidx draws each of a ULID's 16 random characters with a call of its own into the crypto
// module: 3.5 % of a stop's CPU went to its three ids. One call fills the pool for 16 ids.
// (Ids are not secrets: tokens are drawn apart, secrets.ts.)
const pool = new Uint8Array(256);
let used = pool.length;
function random(): number {
  if (used === pool.length) {
    getRandomValues(pool);
    used = 0;
  }
  // In [0, 1), so each of the 32 characters is as likely (ulidx's own divides by 255).
  return (pool[used++] as number) / 256;
}

const next = monotonicFactory(random);

export const ID_PREFIXES = {
  user: 'usr',
  team: 'team',
  org: 'org',
  invitation: 'inv',
  grant: 'grt',
  project: 'prj',
  space: 'spc',
  frame: 'frm',
  agent: 'agt',
  deployment: 'dep',
  domain: 'dom',
  volume: 'vol',
  token: 'tok',
  audit: 'aud',
  email: 'eml',
  event: 'evt',
  notification_endpoint: 'ntf',
  notification_delivery: 'dlv',
  notification_event: 'nev',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind, at: Date = new Date()): string {
  return `${ID_PREFIXES[kind]}_${next(at.getTime())}`;
}

/**
 * A new id that sorts after `previous` (an id of the same kind), whichever process made that
 * one. Ids that serve as stream positions must grow in commit order across instances, and the
 * monotonic factory only orders the ids of one process.
 */
export function newIdAfter(kind: IdKind, at: Date, previous: string | undefined): string {
  const id = newId(kind, at);
  if (!previous || id > previous) return id;
  return newId(kind, new Date(decodeTime(previous.slice(previous.indexOf('_') + 1)) + 1));
}
