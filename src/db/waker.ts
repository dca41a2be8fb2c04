// Wake-ups (NOTIFY) sent after a write committed, the wake-ups of every request that finished
// in the same turn of the event loop in one statement. A transaction that NOTIFYs holds
// PostgreSQL's one notification lock through its commit, so such commits queue behind each
// other (pgbench, 16 clients, one-row updates: 4,200/s alone, 550/s with a NOTIFY inside, 3,300/s
// with it after). After the commit, a wake-up is best effort: one lost to a crash or a database
// error is made up by the event streams' periodic re-check and the agent's next sync.
import { type Kysely, sql } from 'kysely';
import type { DB } from './schema.ts';

// database.ts's Queryable, spelled out: database.ts imports this module (a transaction is a
// Kysely too), and an import back would be a cycle.
type Queryable = Kysely<DB>;

export type WakeChannel = 'frameplane_agent' | 'frameplane_frame_events' | 'frameplane_logs';

// Wake-ups asked for inside a transaction of db/database.ts's transaction(), which sends them
// once it has committed (and drops them if it rolls back); the waker of each database.
const pendingIn = new WeakMap<object, Array<[WakeChannel, string]>>();
const wakerOf = new WeakMap<object, Waker>();

/** Collects the wake-ups asked for inside `trx` (transaction() calls it; then `sent`). */
export function collectWakeUps(trx: object) {
  const list: Array<[WakeChannel, string]> = [];
  pendingIn.set(trx, list);
  return {
    /** The transaction committed: the wake-ups go out through the database's waker. */
    sent(db: object) {
      const waker = wakerOf.get(db);
      for (const [channel, payload] of list) waker?.wake(channel, payload);
    },
  };
}

/**
 * Wakes `channel`'s listeners with `payload` once what `q` wrote has committed: after the
 * commit, batched, when q is a transaction of transaction() or a database with a waker; inside
 * q's own transaction otherwise (a NOTIFY is delivered at commit).
 */
export async function wakeAfterCommit(q: Queryable, channel: WakeChannel, payload: string) {
  const pending = pendingIn.get(q);
  if (pending) {
    pending.push([channel, payload]);
    return;
  }
  const waker = wakerOf.get(q);
  if (waker) waker.wake(channel, payload);
  else await sql`select pg_notify(${channel}, ${payload})`.execute(q);
}

export function createWaker(db: Queryable) {
  let pending = new Map<string, [WakeChannel, string]>();
  let sending: Promise<void> | undefined;

  async function send() {
    await new Promise((resolve) => setImmediate(resolve));
    const batch = [...pending.values()];
    pending = new Map();
    sending = undefined;
    const channels = batch.map(([c]) => c);
    const payloads = batch.map(([, p]) => p);
    await sql`select pg_notify(w.c, w.p)
      from unnest(${channels}::text[], ${payloads}::text[]) as w(c, p)`
      .execute(db)
      .then(
        () => {},
        (err) => waker.onError(err),
      );
  }

  const waker = {
    /** Told of a statement of wake-ups that failed (the app logs it). */
    onError: (_err: unknown) => {},
    /** Queues a wake-up; it goes out in the next statement of wake-ups, moments later. */
    wake(channel: WakeChannel, payload: string | null) {
      if (payload === null) return;
      pending.set(`${channel}:${payload}`, [channel, payload]);
      sending ??= send();
    },
    /** Sends what is queued (before the pool closes). */
    async flush() {
      while (sending) await sending;
    },
  };
  wakerOf.set(db, waker);
  return waker;
}

export type Waker = ReturnType<typeof createWaker>;
