// Every memo of the service in one place: what a process remembers to save the database work,
// each entry with the rule that says when it no longer holds (MEMO_RULES; docs/operations.md,
// Memos). One switch turns them all off: with MEMO=off nothing is remembered and every answer
// is read from the database. CI runs the HTTP and authorization tests so as well, so that a
// memo can never change an answer unnoticed.
import { LRUCache } from 'lru-cache';

/** Each memo, and what makes an entry of it stale (the code that applies it is named). */
export const MEMO_RULES = {
  'frame-rows':
    "a frame's row, reused while its version (xmin) still holds: every write to the frame, " +
    'its replicas, deployments and events moves it (frames/frame-rows.ts)',
  'frame-answers':
    "a frame's answer as JSON, per row version, payer billing, caller's role versions and " +
    'agent liveness and edge (frames/frame-rows.ts)',
  roles:
    "a caller's role on a project, reused while the user's and the project's access versions " +
    'hold (access/role-memo.ts)',
  tokens:
    'a valid bearer token, dropped by a revocation NOTIFYed on any instance, by a lost LISTEN ' +
    'connection, and after 10 minutes (identity/token-cache.ts)',
  revocations:
    'the revoked tokens, loaded when the LISTEN connection comes up and kept by NOTIFY; ' +
    'unknown (so the database is asked) while it is down (identity/revocations.ts)',
  rosters: "a team's members, reused while the team's version holds (teams/member-rosters.ts)",
  'metrics-steps':
    "a frame's metrics points of steps that ended more than 2 minutes ago, as JSON text: the " +
    'ingest dates samples by the service clock on arrival, so such a step no longer changes ' +
    '(frame-metrics/closed-steps.ts)',
  'agent-env':
    "a deployment's opened env for the agents' sync, per deployment id (agent-api/desired-state.ts)",
} as const;

export type MemoName = keyof typeof MEMO_RULES;

/** An LRU cache that remembers nothing: what a memo is with MEMO=off. */
class Forgetful<V extends {}> extends LRUCache<string, V> {
  override set(): this {
    return this;
  }
}

/** Makes the service's memos, all on or all off. */
export function createMemos(on = true) {
  return {
    on,
    /** A memo by name: an LRU cache (lru-cache's options), or one that forgets with MEMO=off. */
    lru<V extends {}>(_name: MemoName, options: LRUCache.Options<string, V, unknown>) {
      return on ? new LRUCache<string, V>(options) : new Forgetful<V>(options);
    },
  };
}

export type Memos = ReturnType<typeof createMemos>;

/** The memos as the service runs them by default (MEMO unset or on). */
export const MEMOS_ON = createMemos(true);
