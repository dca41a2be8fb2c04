// The service's connections to PostgreSQL, through pg and its documented API only.
//
// Every statement with values is a named, server-side prepared statement (a query config with
// a `name`): PostgreSQL plans it a few times per connection and then reuses a generic plan,
// instead of planning it on every request. Our reads are short index lookups with joins and the
// role subquery, so planning them costs more than running them.
//
// Two sets of connections share the budget:
// - a few for reads outside any transaction, pipelined (read-lane.ts);
// - the rest, pooled, each held by one caller at a time: transactions, writes outside one (a
//   write that waits for a row lock would hold up every read pipelined behind it), and the
//   reads the lane has no room for.
// Which statement is a read is decided from its text (readsOnly, below), not by the caller.
//
// Why not postgres.js, which keeps each statement's row description and parsers itself: its
// 3.4.9 crashes the process when a held connection's server goes away (porsager/postgres#1208,
// a write scheduled on a closed socket) and can leave a connection unable to write again after
// a close; our PostgreSQL restart fault test met the first at once (docs/dependencies.md).
import pg from 'pg';
import { parseTimestamptz } from './timestamps.ts';
import { createReadLane, type ReadLane } from './read-lane.ts';

export type Row = Record<string, unknown>;

export interface Result<R> {
  rows: R[];
  /** Rows written by an INSERT, UPDATE, DELETE or MERGE. */
  count?: number;
}

/** A connection held by one caller until released: a transaction's, or a lone write's. */
export interface Held {
  query<R = Row>(text: string, values: readonly unknown[]): Promise<Result<R>>;
  release(): void;
}

export interface Connections {
  /** A statement outside any transaction, pipelined when it only reads and the lane has room. */
  query<R = Row>(text: string, values: readonly unknown[]): Promise<Result<R>>;
  hold(): Promise<Held>;
  end(): Promise<void>;
  /** The pool's connection events, for those who count open sockets (main.ts). */
  readonly pool: pg.Pool;
  /** The read lane's connections (none with fewer than 4 in all): the metrics read its use. */
  readonly lanePool: pg.Pool | undefined;
}

export interface ConnectionOptions {
  /** Connections in all, those pipelined for reads among them. */
  max?: number;
  /** Server-side statement_timeout; the client gives up on a silent server 2 s after it. */
  timeoutMs?: number;
  /** Told of every statement sent (BEGIN and COMMIT too): the bench and tests count them. */
  onStatement?: (text: string) => void;
}

// What may change rows or wait for a lock: a data-modifying statement (also inside WITH), a
// row-locking clause, an advisory lock. Values are bound, never in the text, so only the
// statement's own words can match; a false match only costs the lane, never correctness.
const WRITES =
  /\b(insert|update|delete|merge|truncate|lock)\b|\bfor\s+(no\s+key\s+)?(update|share|key\s+share)\b|pg_advisory/i;

/** Whether a statement only reads: a SELECT (or a WITH of SELECTs) that takes no lock. */
export function readsOnly(text: string): boolean {
  return /^\s*(select|with)\b/i.test(text) && !WRITES.test(text);
}

/** Of `max` connections, those pipelined for reads outside transactions. */
const laneSize = (max: number) => Math.min(2, Math.floor(max / 4));

/** Distinct statements named per process; anything beyond runs unnamed (planned each time). */
const MAX_STATEMENTS = 2_000;

// bigint (count(*)) as a number (our counts fit), timestamptz by our faster parser; the rest
// as pg parses them. Per pool, through pg's `types` option: pg's global parsers stay pg's.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8
      ? Number
      : oid === pg.types.builtins.TIMESTAMPTZ
        ? parseTimestamptz
        : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

// "cached plan must not change result type": a migration changed a table under a prepared
// `select *`. The statement is prepared again under a new name.
export const isStalePlan = (err: unknown) =>
  (err as { code?: string }).code === '0A000' && /cached plan/.test((err as Error).message ?? '');

/** pg's error when a statement got no answer within query_timeout; the socket stays open. */
const isReadTimeout = (err: unknown) =>
  (err as Error | undefined)?.message === 'Query read timeout';

function resultOf<R>(r: pg.QueryResult): Result<R> {
  const counted = /^(INSERT|UPDATE|DELETE|MERGE)$/.test(r.command ?? '');
  return { rows: r.rows as R[], ...(counted && r.rowCount !== null ? { count: r.rowCount } : {}) };
}

/**
 * A client that loses its server (restart, failover), idle or checked out between two
 * statements, must not end the process: pg raises the error again on its next query.
 */
export function survivingLostServers(pool: pg.Pool): pg.Pool {
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

export function createConnections(url: string, options: ConnectionOptions = {}): Connections {
  const { max = 10, timeoutMs = 15_000, onStatement } = options;
  const config: pg.PoolConfig = {
    connectionString: url,
    connectionTimeoutMillis: 5000,
    types,
    // A slow statement is cancelled by the server (57014); a server that does not answer at all
    // (frozen, or a network partition) is given up on by the client. A transaction left open
    // by a crashed request cannot hold its locks for long either.
    statement_timeout: timeoutMs,
    query_timeout: timeoutMs + 2000,
    idle_in_transaction_session_timeout: 60_000,
    application_name: 'frameplane',
  };
  const size = laneSize(max);
  const pool = survivingLostServers(new pg.Pool({ ...config, max: max - size }));
  let lane: ReadLane | undefined;
  let lanePool: pg.Pool | undefined;
  if (size > 0) {
    const piped = new pg.Pool({ ...config, max: size, pipeline: true } as pg.PoolConfig);
    lanePool = survivingLostServers(piped);
    lane = createReadLane(lanePool, size);
  }

  const ids = new Map<string, number>();
  // Whether a text only reads, once per text: the frame read's is a few kB to scan.
  const reads = new Map<string, boolean>();
  const onlyReads = (text: string) => {
    let known = reads.get(text);
    if (known === undefined) {
      known = readsOnly(text);
      if (reads.size < MAX_STATEMENTS) reads.set(text, known);
    }
    return known;
  };
  // Per connection, how many times its statements were prepared again (isStalePlan).
  const generations = new WeakMap<object, number>();
  /** The statement as pg should run it on `client`: named when it has values. */
  function statement(client: object, text: string, values: readonly unknown[]): pg.QueryConfig {
    onStatement?.(text);
    if (values.length === 0) return { text };
    let id = ids.get(text);
    if (id === undefined && ids.size < MAX_STATEMENTS) {
      id = ids.size;
      ids.set(text, id);
    }
    const v = values as unknown[];
    if (id === undefined) return { text, values: v };
    return { name: `fp${id}_${generations.get(client) ?? 0}`, text, values: v };
  }

  async function run<R>(client: pg.PoolClient, text: string, values: readonly unknown[]) {
    try {
      return resultOf<R>(await client.query(statement(client, text, values)));
    } catch (err) {
      if (!isStalePlan(err)) throw err;
      generations.set(client, (generations.get(client) ?? 0) + 1);
      // Outside a transaction the statement can simply run again; inside one, the
      // transaction is aborted and transaction() retries it whole.
      if (client.getTransactionStatus() !== 'I') throw err;
      return resultOf<R>(await client.query(statement(client, text, values)));
    }
  }

  async function hold(): Promise<Held> {
    const client = await pool.connect();
    // After pg's read timeout the client still waits for the server's answer: the pool is
    // told to destroy it (release with an error) rather than hand it to the next request.
    let broken: Error | undefined;
    return {
      query: <R>(text: string, values: readonly unknown[]) =>
        run<R>(client, text, values).catch((err: unknown) => {
          if (isReadTimeout(err)) broken = err as Error;
          throw err;
        }),
      release: () => client.release(broken),
    };
  }

  return {
    pool,
    lanePool,
    async query<R>(text: string, values: readonly unknown[]) {
      if (lane && onlyReads(text)) {
        const piped = lane.query<R>(statement(lane, text, values));
        try {
          if (piped) return resultOf<R>(await piped);
        } catch (err) {
          if (!isStalePlan(err)) throw err;
          // Prepared again under a new name on every lane connection; this once, pooled.
          generations.set(lane, (generations.get(lane) ?? 0) + 1);
        }
      }
      const held = await hold();
      try {
        return await held.query<R>(text, values);
      } finally {
        held.release();
      }
    },
    hold,
    async end() {
      await lane?.close();
      await pool.end();
    },
  };
}
