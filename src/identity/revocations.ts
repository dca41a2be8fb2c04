// Which tokens are revoked, known in memory, so that a signed token (token-format.ts) is
// trusted without a database lookup. The list is loaded once the LISTEN connection is up, then
// kept by the revocations NOTIFYed in each revoking transaction: a revocation on any instance
// reaches this one when it commits, as it reaches the token cache. Losing the connection loses
// the list (a revocation may be missed meanwhile); it is loaded again when the connection is
// back. Until a load has completed since the connection came up, nothing is known and tokens
// are looked up in the database. A reload every hour lets expired tokens leave the list.
import type { Notifier } from '../db/notifier.ts';
import { MEMOS_ON, type Memos } from '../memo.ts';

export const RELOAD_MS = 60 * 60_000;
const RETRY_MS = 5_000;

export interface RevocationOptions {
  /** The ids of the revoked tokens that have not expired yet. */
  load: () => Promise<string[]>;
  reloadMs?: number;
  onError?: (err: unknown) => void;
  /** With memos off (MEMO=off) the list is never known: every token is looked up. */
  memos?: Memos;
}

export function createRevocations(notifier: Notifier | undefined, options: RevocationOptions) {
  const { load, reloadMs = RELOAD_MS, onError = () => {}, memos = MEMOS_ON } = options;
  let revoked = new Set<string>();
  let known = false;
  /** Bumped by every gap: a load begun before it answers for a connection now gone. */
  let generation = 0;
  /** The revocations heard while a load runs: its snapshot may have been taken before them. */
  let heard: Set<string> | undefined;
  let loading = false;
  let again = false;

  const add = (tokenId: string) => {
    revoked.add(tokenId);
    heard?.add(tokenId);
  };

  async function run() {
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    const started = generation;
    const during = new Set<string>();
    heard = during;
    try {
      const ids = await load();
      if (started === generation && notifier?.connected()) {
        revoked = new Set(ids);
        for (const id of during) revoked.add(id);
        known = true;
      } else again = true;
    } catch (err) {
      onError(err);
      setTimeout(refresh, RETRY_MS).unref();
    } finally {
      heard = undefined;
      loading = false;
    }
    if (again) {
      again = false;
      refresh();
    }
  }
  function refresh() {
    if (notifier?.connected()) void run();
  }

  if (notifier) {
    notifier.subscribe('frameplane_tokens', '*', add);
    notifier.onGap(() => {
      generation++;
      known = false;
      revoked = new Set();
      refresh();
    });
    refresh();
    setInterval(refresh, reloadMs).unref();
  }

  return {
    /** Records a revocation this instance made, before its NOTIFY comes back. */
    add,
    /** Whether the list is known now: loaded since the LISTEN connection last came up. */
    known: () => memos.on && known,
    /** Whether the token is revoked; undefined when the list is not known now. */
    revoked: (tokenId: string): boolean | undefined =>
      memos.on && known ? revoked.has(tokenId) : undefined,
  };
}

export type Revocations = ReturnType<typeof createRevocations>;
