// When each token was last used (`access_tokens.last_used_at`), written in batches: one
// statement a second for every token looked up, instead of one statement per
// lookup. A request whose token the cache did not hold (a caller's first request, or its first
// in ten minutes) otherwise sent two statements, its lookup and this write. Best effort, as the
// single write was: a batch lost with its process only leaves last_used_at older. A token's
// use is written at most once a minute, decided by the batch's statement (it skips the rows
// written less than a minute before), not by the caller: a signed token is read without its row.
import type { Database } from '../db/database.ts';
import { touchTokens } from './identity-dal.ts';

export const TOUCH_BATCH_MS = 1000;
/** How often a token's last use is written at most (docs/api.md). */
export const TOUCH_EVERY_MS = 60_000;

export function createTokenTouches(db: Database, everyMs = TOUCH_BATCH_MS) {
  const pending = new Map<string, Date>();
  let timer: NodeJS.Timeout | undefined;

  function flush() {
    timer = undefined;
    if (pending.size === 0) return Promise.resolve();
    const batch = [...pending].map(([id, at]) => ({ id, at }));
    pending.clear();
    return touchTokens(db, batch, TOUCH_EVERY_MS).catch(() => {});
  }

  return {
    /** Records a use of the token at `at` (service time), written with the next batch. */
    touch(tokenId: string, at: Date) {
      pending.set(tokenId, at);
      // Unreferenced: a pending batch never keeps a stopping process alive.
      timer ??= setTimeout(flush, everyMs).unref();
    },
    /** Writes the pending uses now (tests, and a process that stops). */
    flush() {
      if (timer) clearTimeout(timer);
      return flush();
    },
  };
}

export type TokenTouches = ReturnType<typeof createTokenTouches>;
