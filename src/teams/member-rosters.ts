// Member lists, remembered whole per team version. Every change to a team's members (join,
// leave, role change, a member's new name or e-mail) bumps `teams.members_version` in the same
// transaction (triggers in migrations/0003). A request reads the version together with the
// caller's role, in the access check it makes anyway, and is served from a roster only if the
// roster was read at that version: never older than the caller's own view of the team, on any
// instance. Any page of a held roster, after any cursor, is a slice of JSON already serialized;
// a page that misses is read from the database as before.
//
// A roster is read in the background, off the request, once the pages of a team read from the
// database since its last roster read add up to its size, and it missed at least twice: rent
// until renting has cost what buying would (a roster costs a read of the whole team, a page
// costs a read of one page). One-off reads of a team do not pay for it, and a run of callers
// over thousands of teams does not keep loading and evicting whole rosters (the bench's cold
// member list loaded 1,273 of them, up to 10,292 members each, in one run of minutes). One read
// at a time per team, and not again before twenty times the last read's duration has passed:
// a team whose members change all the time is served by the database, not by a reload after
// each change.
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import { MEMOS_ON, type Memos } from '../memo.ts';
import { encodeCursor } from '../paging.ts';

/** A member as a roster holds it: what its page shows, and its cursor key. */
export interface RosterEntry<T> {
  item: T;
  key: string[];
}

/**
 * What a roster read answers: the version and every member in list order, of one snapshot,
 * as read (createMemberRosters' `entry` makes each an entry, a slice at a time).
 */
export interface RosterRead<M> {
  version: number;
  members: M[];
}

interface Roster {
  version: number;
  /**
   * Every member's JSON in list order, separated by commas, in one buffer: outside V8's heap,
   * where ten thousand strings per team were the largest thing it held and marked.
   */
  bytes: Buffer;
  /** Where each member's JSON ends in `bytes`: the next one starts after its comma. */
  ends: Uint32Array;
  /**
   * Each member's key (its parts joined by KEY_SEPARATOR), back to back: a page after a cursor
   * starts after the member of the cursor's key, found by binary search. Not one cursor string
   * and one Map entry per member on V8's heap: those were most of what a roster cost there.
   */
  keys: Buffer;
  keyEnds: Uint32Array;
}

const PAGE_HEAD = Buffer.from('{"data":[');
/** A slice's members, after the comma that ends the slice before (if any). */
const sliceBytes = (texts: string[], before: number) =>
  Buffer.from((before > 0 ? ',' : '') + texts.join(','));
/**
 * Joins a key's parts. Below every printable character, so that comparing joined keys byte by
 * byte compares their parts in turn; a key with one in a part is not held (decodeCursor admits
 * only printable parts, so no cursor could name it).
 */
const KEY_SEPARATOR = '\u0000';

interface Tracking {
  misses: number;
  /** Members read from the database in pages since the last roster read. */
  rented: number;
  loading: boolean;
  readyAt: number;
}

export interface RosterOptions {
  /** Members held across every roster: the memory bound (a larger team is never held). */
  maxMembers?: number;
  onError?: (err: unknown) => void;
  memos?: Memos;
}

const MAX_MEMBERS = 100_000;
const MAX_TRACKED = 10_000;
const RELOAD_FACTOR = 20;
/** Members serialized between two yields to the event loop (about 1 ms). */
const SLICE = 500;

/**
 * `load(teamId, max)` reads at most max + 1 members; `entry` makes a member as read what the
 * roster holds of it. Items serialize with JSON.stringify.
 */
export function createMemberRosters<M, T>(
  load: (teamId: string, max: number) => Promise<RosterRead<M>>,
  entry: (member: M) => RosterEntry<T>,
  { maxMembers = MAX_MEMBERS, onError = () => {}, memos = MEMOS_ON }: RosterOptions = {},
) {
  // Bounded by the members held across rosters, least recently used dropped first; a roster
  // larger than the bound is not held (lru-cache's maxSize; an empty roster counts one).
  const rosters = memos.lru<Roster>('rosters', {
    maxSize: maxMembers,
    sizeCalculation: (r) => Math.max(1, r.ends.length),
  });
  // Teams seen in a cold run are thousands: a Map dropping its first key would pay V8's scan
  // of deleted slots at the front of its table on each new one (token-cache.ts).
  const tracked = new LRUCache<string, Tracking>({ max: MAX_TRACKED });
  const loads = new Set<Promise<void>>();
  const newer = (teamId: string, version: number) =>
    (rosters.peek(teamId)?.version ?? -1) >= version;

  // Built a slice at a time, yielding to requests between slices: the 10,292 members of the
  // bench's big team took 15 to 30 ms in one piece, which every request waiting then waited.
  // Each member is made an entry here too, in its slice, not in one pass over the read.
  async function keep(teamId: string, read: RosterRead<M>) {
    if (newer(teamId, read.version)) return;
    const n = read.members.length;
    if (n > maxMembers) {
      rosters.delete(teamId);
      return;
    }
    const slices: Buffer[] = [];
    const ends = new Uint32Array(n);
    const keyEnds = new Uint32Array(n);
    const keys: string[] = [];
    let slice: string[] = [];
    let bytes = 0;
    let keyBytes = 0;
    for (const [i, member] of read.members.entries()) {
      if (i > 0 && i % SLICE === 0) {
        slices.push(sliceBytes(slice, slices.length));
        slice = [];
        await setImmediate();
      }
      const m = entry(member);
      const text = JSON.stringify(m.item);
      const key = m.key.join(KEY_SEPARATOR);
      if (m.key.some((part) => part.includes(KEY_SEPARATOR))) return;
      bytes += (i > 0 ? 1 : 0) + Buffer.byteLength(text);
      ends[i] = bytes;
      slice.push(text);
      keyBytes += Buffer.byteLength(key);
      keyEnds[i] = keyBytes;
      keys.push(key);
    }
    slices.push(sliceBytes(slice, slices.length));
    // Another read of the team may have been kept while this one was being built.
    if (newer(teamId, read.version)) return;
    rosters.set(teamId, {
      version: read.version,
      bytes: Buffer.concat(slices),
      ends,
      keys: Buffer.from(keys.join('')),
      keyEnds,
    });
  }

  function startLoad(teamId: string, t: Tracking) {
    t.loading = true;
    const started = performance.now();
    const done = load(teamId, maxMembers)
      .then((read) => keep(teamId, read))
      .catch(onError)
      .finally(() => {
        const took = performance.now() - started;
        t.loading = false;
        t.misses = 0;
        t.rented = 0;
        t.readyAt = performance.now() + took * RELOAD_FACTOR;
        loads.delete(done);
      });
    loads.add(done);
  }

  return {
    /** Whether a roster of the team is held at any version: worth an access check of its own. */
    has(teamId: string): boolean {
      return rosters.has(teamId);
    },

    /**
     * The page's JSON, if the roster held is of this version and holds the member the cursor
     * names: `after`, the decoded cursor (its key), undefined for the first page.
     */
    page(teamId: string, version: number, limit: number, after?: string[]): Buffer | undefined {
      const r = rosters.peek(teamId);
      if (r?.version !== version) return undefined;
      const start = after === undefined ? 0 : indexOf(r, after) + 1;
      if (start < 0) return undefined;
      rosters.get(teamId); // served: now the most recently used
      const n = r.ends.length;
      const end = Math.min(start + limit, n);
      const from = start === 0 ? 0 : (r.ends[start - 1] ?? 0) + 1;
      const to = end > start ? (r.ends[end - 1] ?? 0) : from;
      const next = end < n && end > start ? `"${encodeCursor(keyAt(r, end - 1))}"` : 'null';
      return Buffer.concat([
        PAGE_HEAD,
        r.bytes.subarray(from, to),
        Buffer.from(`],"next_cursor":${next}}`),
      ]);
    },

    /**
     * A page of `pageSize` members of this version was read from the database, of a team of
     * `size` members: read the roster if it is worth it.
     */
    missed(teamId: string, version: number, pageSize: number, size: number) {
      if (newer(teamId, version)) return;
      let t = tracked.get(teamId);
      if (!t) {
        t = { misses: 0, rented: 0, loading: false, readyAt: 0 };
        tracked.set(teamId, t);
      }
      t.misses += 1;
      t.rented += pageSize;
      const worth = t.misses >= 2 && t.rented >= size;
      if (worth && !t.loading && performance.now() >= t.readyAt) startLoad(teamId, t);
    },

    /** Resolves when no roster read is in flight (tests; closing). */
    async settled() {
      while (loads.size > 0) await Promise.all(loads);
    },

    get members() {
      return rosters.calculatedSize;
    },
  };
}

const keyStart = (r: Roster, i: number) => (i === 0 ? 0 : (r.keyEnds[i - 1] ?? 0));

function keyAt(r: Roster, i: number): string[] {
  return r.keys.toString('utf8', keyStart(r, i), r.keyEnds[i]).split(KEY_SEPARATOR);
}

/**
 * The index of the member whose key is `key`, or -2. Members are in list order, which is the
 * order of their keys compared byte by byte for the keys we issue (an ISO time of fixed width,
 * then an id of one alphabet); should that ever not hold, the search misses and the page is
 * read from the database, never a wrong one served.
 */
function indexOf(r: Roster, key: string[]): number {
  if (key.some((part) => part.includes(KEY_SEPARATOR))) return -2;
  const wanted = Buffer.from(key.join(KEY_SEPARATOR));
  let lo = 0;
  let hi = r.keyEnds.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = r.keys.compare(wanted, 0, wanted.length, keyStart(r, mid), r.keyEnds[mid]);
    if (c === 0) return mid;
    // compare() orders the roster's key against the wanted one.
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -2;
}

export type MemberRosters = ReturnType<typeof createMemberRosters>;
