// Opaque ids with a type prefix, sortable by creation time (a ULID after the prefix).
import { monotonicFactory } from 'ulidx';

const next = monotonicFactory();

export const ID_PREFIXES = {
  user: 'usr', team: 'team', invitation: 'inv', grant: 'grt', project: 'prj', space: 'spc',
  frame: 'frm', agent: 'agt', deployment: 'dep', domain: 'dom', volume: 'vol', token: 'tok',
  audit: 'aud', email: 'eml', event: 'evt',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind, at: Date = new Date()): string {
  return `${ID_PREFIXES[kind]}_${next(at.getTime())}`;
}
