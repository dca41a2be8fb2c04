// Every parameterised statement runs as a named, server-side prepared statement: PostgreSQL
// then plans it a few times per connection and reuses a generic plan, instead of planning it
// on every request. Our reads are short index lookups with joins and the role subquery, so
// planning them costs more than running them.
//
// Why a patched client.query: Kysely has no hook to name a statement; it always calls
// client.query(text, values), and pg prepares a query config that has a `name`. So each pooled
// client's query is wrapped (on the pool's 'connect', before Kysely gets the client) to turn
// (text, values) into { name, text, values }, the name chosen per distinct text. Statements
// without values keep the simple protocol; any other call shape passes through untouched.
// What this relies on in pg and Kysely is pinned in test/db/library-internals.test.ts.
import type pg from 'pg';

/** Distinct statements named per process; anything beyond runs unnamed (planned each time). */
const MAX_STATEMENTS = 2_000;

// "cached plan must not change result type": a migration changed a table under a prepared
// `select *`. The statement is prepared again under a new name.
export const isStalePlan = (err: unknown) =>
  (err as { code?: string }).code === '0A000' && /cached plan/.test((err as Error).message ?? '');

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

export function prepareStatements(pool: pg.Pool) {
  const ids = new Map<string, number>();
  pool.on('connect', (client) => {
    let generation = 0;
    const query = client.query.bind(client) as Query;
    const named = (text: string, values: unknown[], id: number) =>
      query({ name: `fp${id}_${generation}`, text, values }) as Promise<pg.QueryResult>;
    (client as unknown as { query: Query }).query = (config, values, callback) => {
      if (
        typeof config !== 'string' ||
        !Array.isArray(values) ||
        values.length === 0 ||
        callback !== undefined
      ) {
        return query(config, values, callback);
      }
      let id = ids.get(config);
      if (id === undefined) {
        if (ids.size >= MAX_STATEMENTS) return query(config, values);
        id = ids.size;
        ids.set(config, id);
      }
      const statement = id;
      return named(config, values, statement).catch((err: unknown) => {
        if (!isStalePlan(err)) throw err;
        generation++;
        // Outside a transaction the statement can simply run again; inside one, the
        // transaction is aborted and transaction() retries it whole.
        if (client.getTransactionStatus() === 'I') return named(config, values, statement);
        throw err;
      });
    };
  });
}
