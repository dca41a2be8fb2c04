// The connection pool and the typed query builder. Services own transactions: every data
// access function takes a `Queryable`, which is the database or a transaction.
import pg from 'pg';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import type { DB } from './schema.ts';
import { isStalePlan, prepareStatements } from './prepared.ts';
import { installTimestampParser } from './timestamps.ts';
import { installRowShapes } from './row-shapes.ts';
import { collectWakeUps } from './waker.ts';
import { createReadLane, type ReadLane } from './read-lane.ts';

export type Database = Kysely<DB>;
export type Queryable = Kysely<DB> | Transaction<DB>;

// bigint (count(*)) arrives as a string by default; our counts fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
installTimestampParser();
// After every type parser is set: a column list's parsers are looked up once (row-shapes.ts).
installRowShapes();

export interface PoolOptions {
  /** Connections in all, those of the read lane (below) among them. */
  max?: number;
  /** Server-side statement_timeout; the client gives up on a silent server 2 s after it. */
  timeoutMs?: number;
}

/** Of `max` connections, those pipelined for reads outside transactions (read-lane.ts). */
const laneSize = (max: number) => Math.min(2, Math.floor(max / 4));

/** A pool, and the connections of its budget that are a read lane. */
class LanedPool extends pg.Pool {
  readonly lane: ReadLane | undefined;

  constructor(config: pg.PoolConfig & { max: number }) {
    const size = laneSize(config.max);
    super({ ...config, max: config.max - size });
    if (size === 0) return;
    const piped = new pg.Pool({ ...config, max: size, pipeline: true } as pg.PoolConfig);
    piped.on('error', () => {});
    // A lane's connection is set up by this pool's 'connect' listeners, as any other is.
    piped.on('connect', (client) => this.emit('connect', client));
    this.lane = createReadLane(piped, size);
  }

  override async end() {
    await this.lane?.close();
    await super.end();
  }
}

export function createPool(
  connectionString: string,
  { max = 10, timeoutMs = 15_000 }: PoolOptions = {},
): pg.Pool {
  const pool = new LanedPool({
    connectionString,
    max,
    connectionTimeoutMillis: 5000,
    // A slow statement is cancelled by the server (57014); a server that does not answer at all
    // (frozen, or a network partition) is given up on by the client. A transaction left open
    // by a crashed request cannot hold its locks for long either.
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 2000,
    idle_in_transaction_session_timeout: 60_000,
  });
  // An idle client that loses its server (restart, failover) must not crash the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    // A client checked out of the pool (inside a transaction, between two statements) that
    // loses its server emits 'error' with nobody listening, which would end the process. pg
    // raises the same error on that client's next query, where it is handled.
    client.on('error', () => {});
    dropOnClientTimeout(client);
  });
  prepareStatements(pool);
  return pool;
}

/** The read lane of a pool made by createPool, if it has one. */
export const laneOf = (pool: pg.Pool) => (pool instanceof LanedPool ? pool.lane : undefined);

// After its query_timeout, pg fails the query but leaves the client waiting for the server's
// answer; the next request given that client would wait too. Closing the socket makes the
// client unusable, and the pool replaces it when it is released. pg offers no way to close a
// client's connection from outside its query, hence the private `connection.stream`; the
// error message and that field are pinned in test/db/library-internals.test.ts.
function dropOnClientTimeout(client: pg.PoolClient) {
  const drop = (err: Error | undefined) => {
    if (err?.message === 'Query read timeout')
      (
        client as unknown as { connection: { stream: { destroy(): void } } }
      ).connection.stream.destroy();
  };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: typeof query }).query = (...args) => {
    // A query object (prepared.ts hands pg its own) answers through its callback.
    const submitted = args[0] as { submit?: unknown; callback?: (e?: Error, r?: unknown) => void };
    const callback = submitted?.callback;
    if (typeof submitted?.submit === 'function' && callback)
      submitted.callback = (err, res) => {
        drop(err);
        callback(err, res);
      };
    const result = query(...args);
    if (result instanceof Promise) result.catch(drop);
    return result;
  };
}

const pools = new WeakMap<object, pg.Pool>();

export function createDatabase(pool: pg.Pool): Database {
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

/** The pool under a database made by createDatabase; undefined for a transaction. */
export const poolOf = (q: Queryable): pg.Pool | undefined => pools.get(q);

const RETRYABLE = new Set(['40P01', '40001']); // deadlock detected, serialization failure

/**
 * A transaction that is retried when PostgreSQL aborts it for a deadlock or a serialization
 * failure: concurrent writers that lock rows in different orders (an agent's report and a
 * billing change, say) then both succeed instead of one failing with a 500. A statement whose
 * prepared plan a migration made stale (prepared.ts) is retried the same way. Wake-ups asked
 * for inside it (waker.ts wakeAfterCommit) go out once it has committed.
 */
export async function transaction<T>(
  db: Database,
  fn: (trx: Transaction<DB>) => Promise<T>,
  attempts = 4,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      let wakeUps: ReturnType<typeof collectWakeUps> | undefined;
      const result = await db.transaction().execute((trx) => {
        wakeUps = collectWakeUps(trx);
        return fn(trx);
      });
      wakeUps?.sent(db);
      return result;
    } catch (err) {
      const retryable = RETRYABLE.has((err as { code?: string }).code ?? '') || isStalePlan(err);
      if (attempt >= attempts || !retryable) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}
