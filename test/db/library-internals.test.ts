// What src/db relies on in pg and Kysely beyond their documented use (docs/dependencies.md,
// "Where we reach into a library"). Each case pins one behaviour of the library itself, so that
// an upgrade that changes it fails here, by name, rather than as a slow or hung service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { CompiledQuery, sql } from 'kysely';
import { createDatabase, createPool, transaction, type Database } from '../../src/db/database.ts';
import { parseTimestamptz } from '../../src/db/timestamps.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';

let url: string;
let db: Database;
beforeAll(async () => {
  url = await freshDatabaseUrl();
  db = createDatabase(createPool(url, { max: 2 }));
});
afterAll(() => db.destroy());

async function rawClient(config: pg.ClientConfig = {}) {
  const client = new pg.Client({ connectionString: url, ...config });
  await client.connect();
  return client;
}

type Internals = { connection: { stream: { destroy(): void; destroyed: boolean } } };

describe('prepared.ts: naming the statements Kysely sends', () => {
  it('Kysely calls client.query(text, values) with a string and an array, no callback', async () => {
    const calls: unknown[][] = [];
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...a: unknown[]) => unknown;
      (client as unknown as { query: typeof query }).query = (...args) => {
        calls.push(args);
        return query(...args);
      };
    });
    const k = createDatabase(pool);
    try {
      await k.selectFrom('users').select('id').where('id', '=', 'usr_x').execute();
    } finally {
      await k.destroy();
    }
    const withValues = calls.filter((c) => Array.isArray(c[1]) && (c[1] as unknown[]).length);
    expect(withValues).toHaveLength(1);
    expect(typeof withValues[0]![0]).toBe('string');
    expect(withValues[0]).toHaveLength(2);
  });

  it('pg prepares a query config with a name as a server-side statement', async () => {
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
    } finally {
      await client.end();
    }
  });

  it('pg reports the transaction status of a client', async () => {
    const client = await rawClient();
    try {
      expect(client.getTransactionStatus()).toBe('I');
      await client.query('begin');
      expect(client.getTransactionStatus()).toBe('T');
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });
});

describe('database.ts dropOnClientTimeout: a client that gave up on its server', () => {
  it('pg fails the query with "Query read timeout" and keeps the socket open', async () => {
    const client = await rawClient({ query_timeout: 300 });
    client.on('error', () => {});
    try {
      await expect(client.query('select pg_sleep(3)')).rejects.toThrow(/^Query read timeout$/);
      const stream = (client as unknown as Internals).connection.stream;
      expect(typeof stream.destroy).toBe('function');
      // Still open and waiting for the sleeping statement: the next query would wait too. If a
      // pg upgrade closes it itself, dropOnClientTimeout can go.
      expect(stream.destroyed).toBe(false);
    } finally {
      (client as unknown as Internals).connection.stream.destroy();
    }
  });

  // Without values the simple protocol; with values a prepared statement, whose query object
  // prepared.ts hands pg itself.
  it.each([
    ['a statement without values', ['select pg_sleep(5)']],
    ['a statement with values', ['select pg_sleep($1)', [5]]],
  ] as const)(
    'our pool closes that socket after %s, so the client is not reused',
    async (_, args) => {
      const pool = createPool(url, { max: 1, timeoutMs: 100 }); // the client gives up 2.1 s in
      const client = await pool.connect();
      try {
        await client.query('set statement_timeout = 0'); // the server would never cancel it
        const [text, values] = args;
        await expect(client.query(text, values && [...values])).rejects.toThrow(
          /Query read timeout/,
        );
        const stream = (client as unknown as Internals).connection.stream;
        await waitFor('the pool to destroy the socket', () => stream.destroyed, {
          timeoutMs: 2000,
        });
        expect(stream.destroyed).toBe(true);
      } finally {
        client.release(true);
        await pool.end();
      }
    },
    15_000,
  );
});

describe("timestamps.ts: our parser in place of pg's", () => {
  it('is the parser pg uses for timestamptz once database.ts is loaded', async () => {
    expect(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ)).toBe(parseTimestamptz);
    const { rows } = await sql<{ at: Date }>`
      select '2026-11-22 05:40:01.123456+00'::timestamptz as at`.execute(db);
    expect(rows[0]!.at).toBeInstanceOf(Date);
    expect(rows[0]!.at.toISOString()).toBe('2026-11-22T05:40:01.123Z');
  });

  it('PostgreSQL sends timestamptz in the ISO text form the parser reads', async () => {
    const client = await rawClient();
    try {
      const { rows } = await client.query(
        "select '2026-11-22 05:40:01.5+00'::timestamptz::text as t, current_setting('DateStyle') as style",
      );
      expect(rows[0].style).toMatch(/^ISO/);
      expect(rows[0].t).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?[+-]\d\d(:\d\d)?$/);
    } finally {
      await client.end();
    }
  });
});

describe('compiled.ts compiledOnce: binding new values to text compiled once', () => {
  it('Kysely binds a where value as a parameter, the same string, never in the text', () => {
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

  it('a raw CompiledQuery runs on the connection of the transaction it is given', async () => {
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

describe("row-shapes.ts: a column list's parsers and empty row worked out once", () => {
  type Shaped = pg.QueryResult & { _parsers: unknown[]; _prebuiltEmptyResultObject: object };
  const WIDE = `select 1::int8 as n, 'a'::text as t, true as b, null::text as z,
    '2026-11-22 05:40:01.5+00'::timestamptz as at, '{"k": [1]}'::jsonb as j, 2.5::float8 as f`;

  it("pg's Query gives each execution's columns to Result#addFields, which ours replaces", async () => {
    const client = await rawClient();
    try {
      const first = (await client.query(WIDE)) as Shaped;
      const again = (await client.query(WIDE)) as Shaped;
      // The same parsers and empty row for the same columns: looked up once.
      expect(again._parsers).toBe(first._parsers);
      expect(again._prebuiltEmptyResultObject).toBe(first._prebuiltEmptyResultObject);
      expect(first.fields.map((f) => f.name)).toEqual(['n', 't', 'b', 'z', 'at', 'j', 'f']);
    } finally {
      await client.end();
    }
  });

  it('answers rows of every type we read, by the parsers of the client that read them', async () => {
    const ours = await rawClient();
    // A client with parsers of its own: int8 left as text.
    const own = {
      getTypeParser: (oid: number, format?: string) =>
        oid === 20 ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text'),
    };
    const theirs = await rawClient({ types: own as unknown as pg.CustomTypesConfig });
    try {
      const a = (await ours.query(WIDE)) as Shaped;
      expect(a.rows[0]).toEqual({
        n: 1,
        t: 'a',
        b: true,
        z: null,
        at: new Date('2026-11-22T05:40:01.500Z'),
        j: { k: [1] },
        f: 2.5,
      });
      const b = (await theirs.query(WIDE)) as Shaped;
      expect(b.rows[0]).toEqual({ ...a.rows[0], n: '1' });
      // Same column count, other names and types: a shape of its own.
      const other = await ours.query(
        `select 'x'::text as n, 2::int8 as t, false as b, 'q'::text as z,
          null::timestamptz as at, '[]'::jsonb as j, 1::float8 as f`,
      );
      expect(other.rows[0]).toEqual({ n: 'x', t: 2, b: false, z: 'q', at: null, j: [], f: 1 });
    } finally {
      await ours.end();
      await theirs.end();
    }
  });
});
