// Opaque ids with a type prefix, sortable by creation time (a ULID after the prefix).
import { decodeTime, monotonicFactory } from 'ulidx';

const next = monotonicFactory();

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
