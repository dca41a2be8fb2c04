// The connection pool and the typed query builder. Services own transactions: every data
// access function takes a `Queryable`, which is the database or a transaction.
import pg from 'pg';
import { Kysely, PostgresDialect, type Transaction } from 'kysely';
import type { DB } from './schema.ts';

export type Database = Kysely<DB>;
export type Queryable = Kysely<DB> | Transaction<DB>;

// bigint (count(*)) arrives as a string by default; our counts fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 5000 });
  // An idle client that loses its server (restart, failover) must not crash the process.
  pool.on('error', () => {});
  // A client checked out of the pool (inside a transaction, between two statements) that loses
  // its server emits 'error' with nobody listening, which would end the process. pg raises the
  // same error on that client's next query, where it is handled, so listening is enough.
  pool.on('connect', (client) => { client.on('error', () => {}); });
  return pool;
}

export function createDatabase(pool: pg.Pool): Database {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

const RETRYABLE = new Set(['40P01', '40001']); // deadlock detected, serialization failure

/**
 * A transaction that is retried when PostgreSQL aborts it for a deadlock or a serialization
 * failure: concurrent writers that lock rows in different orders (an agent's report and a
 * billing change, say) then both succeed instead of one failing with a 500.
 */
export async function transaction<T>(db: Database, fn: (trx: Transaction<DB>) => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn);
    } catch (err) {
      if (attempt >= attempts || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}
