// Kysely's PostgreSQL dialect over our connections (connections.ts) rather than a bare pg pool.
// Kysely's own parts (query compiler, adapter, introspector) are used as they are; only the
// driver is ours, through Kysely's public Driver interface: Kysely's PostgresDialect sends
// client.query(text, values), which cannot name a statement or pipeline a read.
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { Connections, Held, Result } from './connections.ts';

const queryResult = <R>({ rows, count }: Result<R>): QueryResult<R> =>
  count === undefined ? { rows } : { rows, numAffectedRows: BigInt(count) };

/**
 * One of Kysely's connections: on its own, each statement goes where connections.ts sends it;
 * in a transaction, every statement goes to the connection held for it.
 */
class Connection implements DatabaseConnection {
  held: Held | undefined;

  constructor(private readonly connections: Connections) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const target = this.held ?? this.connections;
    return queryResult(await target.query<R>(query.sql, query.parameters));
  }

  // biome-ignore lint/correctness/useYield: refuses before the first value
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streamed queries are not supported by this driver');
  }
}

const beginWith = ({ isolationLevel, accessMode }: TransactionSettings) =>
  ['begin', isolationLevel && `isolation level ${isolationLevel}`, accessMode]
    .filter(Boolean)
    .join(' ');

class PostgresDriver implements Driver {
  constructor(private readonly connections: Connections) {}

  async init() {}

  async acquireConnection() {
    return new Connection(this.connections);
  }

  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings) {
    const connection = c as Connection;
    connection.held = await this.connections.hold();
    await connection.held.query(beginWith(settings), []);
  }

  async commitTransaction(c: DatabaseConnection) {
    await (c as Connection).held?.query('commit', []);
  }

  async rollbackTransaction(c: DatabaseConnection) {
    // Kysely would throw a failed rollback's error in place of the one that caused it. A
    // rollback fails on a connection that is gone, which the pool replaces; a session left
    // in a transaction is ended by the server (idle_in_transaction_session_timeout).
    await (c as Connection).held?.query('rollback', []).catch(() => {});
  }

  async releaseConnection(c: DatabaseConnection) {
    const connection = c as Connection;
    connection.held?.release();
    connection.held = undefined;
  }

  async destroy() {
    await this.connections.end();
  }
}

export class PostgresDialect implements Dialect {
  constructor(private readonly connections: Connections) {}
  createAdapter = () => new PostgresAdapter();
  createDriver = () => new PostgresDriver(this.connections);
  createQueryCompiler = () => new PostgresQueryCompiler();
  createIntrospector = (db: Kysely<unknown>) => new PostgresIntrospector(db);
}
