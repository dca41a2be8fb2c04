// Frame rows as last read, each under its version (xmin). A frame read again is read as its
// version and the facts outside its row (its payer's billing, its agent's last call and edge)
// and, if the version still holds, answered from the row remembered: a frame's row is most of a
// read's bytes and of its parsing, and it moves only when the frame, its replicas, deployments
// or events change (frames-dal frameOf). So an entry can be old but never wrong, on any instance:
// a row whose version moved is read whole again.
//
// Only rows that a read outside any transaction answered are remembered: those are committed.
// (Inside a transaction a row may be its own uncommitted change, which it may change again
// under the same xmin.)
import { LRUCache } from 'lru-cache';
import { MEMOS_ON, type Memos } from '../memo.ts';
import type { Queryable } from '../db/database.ts';
import type { RoleSeen } from '../access/role-memo.ts';
import { type FrameForCaller, frameFactsForCaller, frameForCaller } from './frames-dal.ts';
import { etagOf } from './frame-view.ts';

/** A frame row is about 1.7 kB in memory (measured with its parsed JSON): 5,000 are some 9 MB. */
const MAX_ROWS = 5_000;

/**
 * What a remembered row holds in place of the caller it was read for: no role, and versions
 * no read has. The keys are there so that a read's facts only overwrite keys of the copy
 * (read below). V8 copies a 50-key object made by a spread in about 0.1 µs, one made by rest
 * destructuring in about 11, and adding three keys to the copy took about 7 more (measured in
 * Node 20 on this 2-core machine, the frame row's keys, a million copies each).
 */
const NO_CALLER: RoleSeen = { role: null, caller_access_version: -1, project_access_version: -1 };

/**
 * A frame's answer (GET …/frames/:id) as the UTF-8 bytes of its JSON, for one version of all it
 * shows. Bytes, not the serializer's string: that is a rope of its many pieces, kept whole
 * while the string is (measured on a 1.4 kB JSON built by concatenation: 13.5 kB of heap).
 */
export interface FrameAnswer {
  /** What the answer was made of: the row's version and the facts outside the row. */
  key: string;
  body: Buffer;
  etag: string;
}

/**
 * The bytes in a buffer of their own. Buffer.from(text) of under 4 kB is a slice of a shared
 * 8 kB slab, which stays whole while any slice of it is kept: answers dropped in LRU order
 * left most slabs held by one answer (20 MB of buffers after the bench, for some 8 MB of
 * answers).
 */
function ownBytes(text: string) {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

export function createFrameRows(memos: Memos = MEMOS_ON, max = MAX_ROWS) {
  const rows = memos.lru<FrameForCaller>('frame-rows', { max });
  const answers = memos.lru<FrameAnswer>('frame-answers', { max });
  // Frames read once lately, by id alone: a row (and its answer) is remembered when its frame
  // is read a second time. A frame read once and never again cost its row, its answer and their
  // moves to V8's old generation, to evict another frame that was read again.
  const readOnce = new LRUCache<string, true>({ max: max * 4 });

  function remember(row: FrameForCaller) {
    rows.set(row.id, { ...row, ...NO_CALLER });
  }

  return {
    /**
     * The frame and the caller's role (or, `remembered`, the role's versions) in one round
     * trip when its row is remembered and current or not remembered; two when it moved.
     * `committed`: `q` is the pool, not a transaction, so what it reads may be remembered
     * (from its second read, readOnce).
     */
    async read(
      q: Queryable,
      committed: boolean,
      scope: { projectId: string; spaceId: string; frameId: string; userId: string },
      remembered: boolean,
    ): Promise<FrameForCaller | undefined> {
      const { projectId, spaceId, frameId, userId } = scope;
      const known = rows.get(frameId);
      if (known) {
        const facts = await frameFactsForCaller(q, projectId, spaceId, frameId, userId, remembered);
        if (!facts) return undefined;
        if (facts.row_version === known.row_version) return { ...known, ...facts };
      }
      const row = await frameForCaller(q, projectId, spaceId, frameId, userId, remembered);
      if (row && committed) {
        if (known || readOnce.delete(frameId)) remember(row);
        else readOnce.set(frameId, true);
      }
      return row;
    },

    /** The row as a committed write left it (one that returned the row's new version). */
    wrote: remember,

    /**
     * The row as last read or written, with the facts outside it as they were then, and no
     * caller's role (NO_CALLER).
     */
    known: (frameId: string) => rows.get(frameId),

    /**
     * The frame's answer as the route's serializer writes it, made once per version of what
     * it shows: the row, the payer's billing, the agent's last call and whether that makes
     * it online now, and the agent's edge (the frame's url). Presenting and serializing a frame were a fifth of a read's CPU. Kept
     * only for a frame whose row is remembered.
     */
    answer(
      f: FrameForCaller,
      agentOnline: boolean,
      present: () => { id: string; version: number },
      serialize: (view: unknown) => string,
    ): FrameAnswer {
      const seen = f.agent_last_seen_at?.getTime() ?? '';
      const edge = `${f.agent_edge_http_port} ${f.agent_edge_https_port}`;
      const key = `${f.row_version} ${f.billing_status} ${seen} ${agentOnline} ${edge}`;
      const known = answers.get(f.id);
      if (known?.key === key) return known;
      const view = present();
      const text = serialize(view);
      const kept = rows.has(f.id);
      const made = { key, body: kept ? ownBytes(text) : Buffer.from(text), etag: etagOf(view) };
      if (kept) answers.set(f.id, made);
      return made;
    },

    get size() {
      return rows.size;
    },
  };
}

export type FrameRows = ReturnType<typeof createFrameRows>;
