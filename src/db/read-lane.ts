// Reads outside any transaction, pipelined on a few connections of their own (connections.ts
// keeps writes off: one waiting for a row lock would hold up the reads behind it). A pooled
// statement checks a connection out, and no other statement uses it until the answer is back:
// under load, each wakes a backend that sat idle, and on the bench's two cores those wake-ups
// and the switches between processes cost more than many a statement itself (the frame read,
// cold, at 16 connections: PostgreSQL 133 µs a request pooled, 104 pipelined; the service's
// main thread 113 and 96). On a pipelined connection (pg's `pipeline: true`) a statement is
// written at once, behind those still running, with a Sync of its own: it is its own
// transaction and its error is its own, and a backend answers several per wake-up.
//
// A statement waits behind those sent before it on its connection, so each goes to the
// connection with the fewest waiting, and when every connection has MAX_WAITING, to the pool
// as before (query answers undefined). A connection that ends (its server gone, pg's read
// timeout) is dropped, and the next statement opens another.
import type pg from 'pg';

/** Statements one connection may have waiting before the lane sends more to the pool. */
const MAX_WAITING = 8;

export interface ReadLane {
  /** The answer, or undefined when every connection of the lane is full or not open yet. */
  query<R>(statement: pg.QueryConfig): Promise<pg.QueryResult<R & pg.QueryResultRow>> | undefined;
  /** Gives every connection back to `pool` (made with `pipeline: true`), and ends it. */
  close(): Promise<void>;
}

interface Connection {
  client?: pg.PoolClient;
  opening?: Promise<void>;
  waiting: number;
}

export function createReadLane(pool: pg.Pool, size: number): ReadLane {
  const connections: Connection[] = Array.from({ length: size }, () => ({ waiting: 0 }));
  let closed = false;

  function open(c: Connection) {
    c.opening ??= pool
      .connect()
      .then((client) => {
        if (closed) return client.release();
        c.client = client;
        client.once('end', () => {
          if (c.client !== client) return;
          c.client = undefined;
          client.release(true);
        });
      })
      // The pool as before until a connection opens; the next statement tries again.
      .catch(() => {})
      .finally(() => (c.opening = undefined));
  }

  function pick() {
    let best: Connection | undefined;
    for (const c of connections) {
      if (!c.client) {
        if (!closed) open(c);
      } else if (c.waiting < MAX_WAITING && (!best || c.waiting < best.waiting)) best = c;
    }
    return best;
  }

  return {
    query<R>(statement: pg.QueryConfig) {
      const c = pick();
      if (!c?.client) return undefined;
      c.waiting++;
      return c.client.query<R & pg.QueryResultRow>(statement).finally(() => c.waiting--);
    },

    async close() {
      closed = true;
      await Promise.all(connections.map((c) => c.opening));
      for (const c of connections) {
        c.client?.release();
        c.client = undefined;
      }
      await pool.end();
    },
  };
}
