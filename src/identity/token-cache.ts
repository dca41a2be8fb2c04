// Valid bearer tokens, remembered so that an authenticated request costs no extra database
// round trip. A revocation clears the entry on every instance at once: it is NOTIFYed in the
// revoking transaction. A lookup that overlapped any revocation is not cached. While the
// LISTEN connection is down nothing is cached, and losing or regaining it drops everything
// (a revocation may have been missed in between). Entries live at most TTL_MS all the same.
// A token not cached is looked up in the database, unless it is signed (token-format.ts) and
// the revocations (revocations.ts) say it is not revoked.
import type { Notifier } from '../db/notifier.ts';
import { MEMOS_ON, type Memos } from '../memo.ts';
import type { Revocations } from './revocations.ts';

export interface CachedToken {
  userId: string;
  tokenId: string;
  expiresAt: Date | null;
}

const MAX_ENTRIES = 20_000;
const TTL_MS = 10 * 60_000;

export function createTokenCache(
  notifier: Notifier | undefined,
  revocations?: Revocations,
  memos: Memos = MEMOS_ON,
) {
  // Not a Map dropping its first key: V8 scans every deleted slot at the front of a Map's
  // table to find it, some 11 µs an insert once full, against 0.5 here (lru-cache's lists).
  const entries = memos.lru<CachedToken & { cachedAt: number }>('tokens', { max: MAX_ENTRIES });
  /** Bumped by every revocation and gap: a lookup that overlapped one is not cached. */
  let marks = 0;

  const forget = (tokenId: string) => {
    revocations?.add(tokenId);
    marks++;
    const gone: string[] = [];
    entries.forEach((e, key) => {
      if (e.tokenId === tokenId) gone.push(key);
    });
    for (const key of gone) entries.delete(key);
  };
  notifier?.subscribe('frameplane_tokens', '*', forget);
  notifier?.onGap(() => {
    marks++;
    entries.clear();
  });

  return {
    /** Drops a revoked token here at once; other instances hear of it by NOTIFY. */
    forget,
    /** Without a notifier there is no way to hear of revocations: nothing is cached. */
    enabled: notifier !== undefined,
    get(key: string): CachedToken | undefined {
      const e = entries.get(key);
      if (!e) return undefined;
      if (Date.now() - e.cachedAt > TTL_MS) {
        entries.delete(key);
        return undefined;
      }
      return e;
    },
    /** Call before the database lookup; pass the mark to set(). */
    mark: () => marks,
    /** Whether a token is revoked, if known without the database (revocations.ts). */
    revoked: (tokenId: string) => revocations?.revoked(tokenId),
    set(key: string, value: CachedToken, mark: number) {
      if (!notifier?.connected() || mark !== marks) return;
      // Field by field, not a spread: each spread copy got a hidden class of its own, some
      // 250 B an entry (20,000 entries: 5 MB; measured with node --expose-gc).
      const { userId, tokenId, expiresAt } = value;
      entries.set(key, { userId, tokenId, expiresAt, cachedAt: Date.now() });
    },
  };
}

export type TokenCache = ReturnType<typeof createTokenCache>;
