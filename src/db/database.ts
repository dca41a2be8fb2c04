// The database: Kysely over our connections (connections.ts, kysely-driver.ts). Services own
// transactions: every data access function takes a `Queryable`, which is the database or a
// transaction. The job queue and the migrations run on a pg pool of their own (createPgPool):
// graphile-worker is written for pg.
import pg from 'pg';
import { Kysely, type Transaction } from 'kysely';
import type { DB } from './schema.ts';
import {
  type ConnectionOptions,
  type Connections,
  createConnections,
  isStalePlan,
  survivingLostServers,
} from './connections.ts';
import { PostgresDialect } from './kysely-driver.ts';
import { collectWakeUps } from './waker.ts';

export type Database = Kysely<DB>;
export type Queryable = Kysely<DB> | Transaction<DB>;

const connectionsOfDb = new WeakMap<object, Connections>();

export function createDatabase(url: string, options: ConnectionOptions = {}): Database {
  const connections = createConnections(url, options);
  const db = new Kysely<DB>({ dialect: new PostgresDialect(connections) });
  connectionsOfDb.set(db, connections);
  return db;
}

/** The connections under a database made by createDatabase; undefined for a transaction. */
export const connectionsOf = (q: Queryable): Connections | undefined => connectionsOfDb.get(q);

/**
 * A plain pg pool for graphile-worker and the migrations (which hand it to graphile-worker's
 * own). Its connections are apart from the database's: `max` of them at the most.
 */
export function createPgPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: 5000,
    // The queue's statements are short; a server that stops answering is given up on.
    query_timeout: 30_000,
  });
  return survivingLostServers(pool);
}

const RETRYABLE = new Set(['40P01', '40001']); // deadlock detected, serialization failure

/**
 * A transaction that is retried when PostgreSQL aborts it for a deadlock or a serialization
 * failure: concurrent writers that lock rows in different orders (an agent's report and a
 * billing change, say) then both succeed instead of one failing with a 500. A statement whose
 * prepared plan a migration made stale is retried the same way (outside a transaction,
 * connections.ts prepares it again itself). Wake-ups asked
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
