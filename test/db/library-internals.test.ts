// What src/db relies on in pg and Kysely beyond a first reading of their documentation
// (docs/dependencies.md, "What we rely on in a library"). Each case pins one behaviour of the
// library itself, through its public API, so that an upgrade that changes it fails here, by
// name, rather than as a slow or hung service. Nothing in src/ reaches into a library's
// private parts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { CompiledQuery, sql } from 'kysely';
import { createDatabase, transaction, type Database } from '../../src/db/database.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';

let url: string;
let db: Database;
beforeAll(async () => {
  url = await freshDatabaseUrl();
  db = createDatabase(url, { max: 2 });
});
afterAll(() => db.destroy());

async function rawClient(config: pg.ClientConfig = {}) {
  const client = new pg.Client({ connectionString: url, ...config });
  client.on('error', () => {});
  await client.connect();
  return client;
}

describe('pg', () => {
  it('prepares a query config with a name as a server-side statement', async () => {
    const client = await rawClient();
    try {
      await client.query({ name: 'pin_named', text: 'select $1::int as n', values: [1] });
      const { rows } = await client.query(
        "select name from pg_prepared_statements where name = 'pin_named'",
      );
      expect(rows).toEqual([{ name: 'pin_named' }]);
    } finally {
      await client.end();
    }
  });

  it('pipelines statements of one name sent back to back, preparing it once', async () => {
    const client = await rawClient({ pipeline: true } as pg.ClientConfig);
    try {
      const sent = [1, 2, 3].map((n) =>
        client.query({ name: 'pin_piped', text: 'select $1::int as n', values: [n] }),
      );
      expect((await Promise.all(sent)).map((r) => r.rows)).toEqual([
        [{ n: 1 }],
        [{ n: 2 }],
        [{ n: 3 }],
      ]);
    } finally {
      await client.end();
    }
  });

  it('a prepared select * of a changed table fails with 0A000 "cached plan"', async () => {
    const client = await rawClient();
    try {
      await client.query('create table pin_gadgets (id int)');
      const read = {
        name: 'pin_read',
        text: 'select * from pin_gadgets where id = $1',
        values: [1],
      };
      await client.query(read);
      await client.query('alter table pin_gadgets add column colour text');
      const err = await client.query(read).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: '0A000', message: expect.stringMatching(/cached plan/) });
      expect(client.getTransactionStatus()).toBe('I');
      await client.query('begin');
      expect(client.getTransactionStatus()).toBe('T');
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });

  it('fails a statement with "Query read timeout"; a pool destroys a client released with it', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1, query_timeout: 300 });
    pool.on('error', () => {});
    const client = await pool.connect();
    client.on('error', () => {});
    const err = await client.query('select pg_sleep(3)').catch((e: unknown) => e as Error);
    expect(err).toMatchObject({ message: 'Query read timeout' });
    client.release(err as Error);
    await waitFor('the pool to drop the client', () => pool.totalCount === 0, { timeoutMs: 2000 });
    expect(pool.totalCount).toBe(0);
    await pool.end();
  });
});

describe('Kysely (compiled.ts compiledOnce binds new values to text compiled once)', () => {
  it('binds a where value as a parameter, the same string, never in the text', () => {
    const marker = '\u0000fp-arg-0\u0000';
    const { sql: text, parameters } = db
      .selectFrom('users')
      .select('id')
      .where('id', '=', marker)
      .limit(5)
      .compile();
    expect(text).not.toContain(marker);
    expect(text).toMatch(/\$1/);
    expect(parameters).toContain(marker);
  });

  it('runs a raw CompiledQuery on the connection of the transaction it is given', async () => {
    const seen = await transaction(db, async (trx) => {
      await sql`create temporary table pin_tx (n int) on commit drop`.execute(trx);
      await sql`insert into pin_tx values (7)`.execute(trx);
      return trx.executeQuery<{ n: number }>(
        CompiledQuery.raw('select n from pin_tx where n = $1', [7]),
      );
    });
    expect(seen.rows).toEqual([{ n: 7 }]);
  });
});

describe('PostgreSQL', () => {
  it('sends timestamptz in the ISO text form our parser reads', async () => {
    const { rows } = await sql<{ t: string; style: string }>`
      select '2026-11-22 05:40:01.5+00'::timestamptz::text as t,
        current_setting('DateStyle') as style`.execute(db);
    expect(rows[0]!.style).toMatch(/^ISO/);
    expect(rows[0]!.t).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?[+-]\d\d(:\d\d)?$/);
  });
});
