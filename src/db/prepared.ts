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
//
// A named statement's columns are asked for once per connection. pg asks for them (Describe)
// on every execution, and PostgreSQL answers with a RowDescription: for the frame read's 50
// columns, a catalog lookup per column on the server and 50 field objects parsed here, every
// time. A prepared statement's result type cannot change (PostgreSQL refuses to run it,
// "cached plan must not change result type", and it is prepared again under a new name), so
// the first description of a name holds for as long as the connection has that statement.
// What this relies on in pg and Kysely is pinned in test/db/library-internals.test.ts.
import pg from 'pg';

/** Distinct statements named per process; anything beyond runs unnamed (planned each time). */
const MAX_STATEMENTS = 2_000;

// "cached plan must not change result type": a migration changed a table under a prepared
// `select *`. The statement is prepared again under a new name.
export const isStalePlan = (err: unknown) =>
  (err as { code?: string }).code === '0A000' && /cached plan/.test((err as Error).message ?? '');

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

interface Field {
  name: string;
  dataTypeID: number;
  format: string;
}
/** What of pg's Query (lib/query.js) this reaches into. */
interface QueryInternals {
  _result: { addFields(fields: Field[]): void };
  _accumulateRows: boolean;
  prepare(connection: { describe(message: unknown): void }): void;
  handleRowDescription(message: { fields: Field[] }): void;
}

/**
 * A named statement as pg runs it, without the Describe once `columns` holds its fields:
 * pg's own prepare (parse if new, bind, execute, sync) with the describe left out, and the
 * result given the fields the first RowDescription brought.
 */
function namedQuery(
  query: Query,
  config: { name: string; text: string; values: unknown[] },
  columns: Map<string, Field[]>,
) {
  return new Promise<pg.QueryResult>((resolve, reject) => {
    // (text, values, callback) and the name set after: a config object would be copied whole
    // by pg (utils cloneQueryConfig, property descriptors and all), a few µs per statement.
    const q = new pg.Query(config.text, config.values, (err: Error | undefined, res: unknown) =>
      err ? reject(err) : resolve(res as pg.QueryResult),
    ) as unknown as QueryInternals & { name: string };
    q.name = config.name;
    const known = columns.get(config.name);
    if (known) {
      q._result.addFields(known);
      q._accumulateRows = true; // as pg's handleRowDescription sets it for a query with a callback
      const prepare = q.prepare;
      q.prepare = (connection) =>
        prepare.call(q, Object.assign(Object.create(connection), { describe() {} }));
    } else {
      const describe = q.handleRowDescription;
      q.handleRowDescription = (message) => {
        columns.set(config.name, message.fields);
        describe.call(q, message);
      };
    }
    query(q);
  });
}

export function prepareStatements(pool: pg.Pool) {
  const ids = new Map<string, number>();
  pool.on('connect', (client) => {
    let generation = 0;
    const query = client.query.bind(client) as Query;
    const columns = new Map<string, Field[]>();
    const named = (text: string, values: unknown[], id: number) =>
      namedQuery(query, { name: `fp${id}_${generation}`, text, values }, columns);
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
