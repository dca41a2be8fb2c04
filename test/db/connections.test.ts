// The service's connections (src/db/connections.ts): statements prepared once per connection
// and kept across a migration; reads outside transactions pipelined, each with its own answer
// and error; a write waiting for a lock holds up no read; lost connections replaced; a silent
// server given up on; values in and out as the data layer expects them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import {
  connectionsOf,
  createDatabase,
  transaction,
  type Database,
} from '../../src/db/database.ts';
import { readsOnly } from '../../src/db/connections.ts';
import { compiledOnce } from '../../src/db/compiled.ts';
import { fromPgError } from '../../src/http/pg-errors.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';

let url: string;
let db: Database;
let admin: pg.Client;

/** Client backends of this database, `admin`'s aside (autovacuum workers show there too). */
async function backends() {
  const { rows } = await admin.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid()
        and backend_type = 'client backend'`,
  );
  return rows[0]?.n ?? 0;
}

const echo = compiledOnce((_q, n: number) => sql<{ n: number }>`select ${n}::int as n`);
const inverse = compiledOnce((_q, n: number) => sql<{ x: number }>`select 100 / ${n}::int as x`);

beforeAll(async () => {
  url = await freshDatabaseUrl();
  db = createDatabase(url, { max: 8 });
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await db.destroy();
});

describe('readsOnly: the text decides where a statement outside a transaction goes', () => {
  it.each([
    ['select "id" from "frames" where "id" = $1', true],
    ['with x as (select 1) select * from x', true],
    ['select "updated_at", "deleted_at" from "frames"', true],
    ['select * from "frames" where "id" = $1 for update', false],
    ['select * from "frames" for no key update', false],
    ['select * from "frames" for share', false],
    ['select 1 from pg_advisory_xact_lock($1)', false],
    ['with f as (update "frames" set "version" = 1 returning *) select * from f', false],
    ['with e as (insert into "frame_events" select 1) select 1', false],
    ['insert into "t" values ($1)', false],
    ['update "t" set "a" = $1', false],
    ['delete from "t"', false],
    ['begin', false],
  ])('%s → %s', (text, expected) => {
    expect(readsOnly(text)).toBe(expected);
  });
});

describe('prepared statements', () => {
  let one: Database;
  beforeAll(async () => {
    one = createDatabase(url, { max: 1 }); // every statement meets the same session
    await sql`create table gadgets (id int primary key, name text)`.execute(one);
    await sql`insert into gadgets values (1, 'one'), (2, 'two')`.execute(one);
  });
  afterAll(() => one.destroy());

  const prepared = async () =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(one))
      .rows;

  it('prepares a statement once per connection and reuses it', async () => {
    for (let i = 0; i < 8; i++)
      expect(
        (await sql<{ name: string }>`select name from gadgets where id = ${1}`.execute(one)).rows,
      ).toEqual([{ name: 'one' }]);
    const mine = (await prepared()).filter((p) =>
      p.statement.includes('from gadgets where id = $1'),
    );
    expect(mine).toHaveLength(1);
  });

  it('survives a migration that changes the result of a prepared select *', async () => {
    const read = () =>
      one
        .selectFrom('gadgets' as never)
        .selectAll()
        .where('id' as never, '=', 2 as never)
        .execute();
    expect(await read()).toEqual([{ id: 2, name: 'two' }]);
    await sql`alter table gadgets add column colour text default 'red'`.execute(one);
    expect(await read()).toEqual([{ id: 2, name: 'two', colour: 'red' }]);
    await sql`alter table gadgets add column size int default 3`.execute(one);
    // Inside a transaction the statement cannot run again alone: transaction() retries it whole.
    const rows = await transaction(one, async (trx) =>
      trx
        .selectFrom('gadgets' as never)
        .selectAll()
        .where('id' as never, '=', 2 as never)
        .execute(),
    );
    expect(rows).toEqual([{ id: 2, name: 'two', colour: 'red', size: 3 }]);
  });
});

describe('reads outside transactions, pipelined', () => {
  it('answers each of many concurrent statements with its own rows, within the budget', async () => {
    const ns = Array.from({ length: 300 }, (_, i) => i);
    expect(await Promise.all(ns.map((n) => echo(db, n)))).toEqual(ns.map((n) => [{ n }]));
    // 2 pipelined and 6 one at a time: no more than 8 backends ever.
    expect(await backends()).toBeLessThanOrEqual(8);
  });

  it('fails only the statement that fails', async () => {
    const results = await Promise.allSettled([5, 0, 20, 0, 4].map((n) => inverse(db, n)));
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: [{ x: 20 }] });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: '22012' } });
    expect(results[4]).toEqual({ status: 'fulfilled', value: [{ x: 25 }] });
  });

  it('replaces connections whose server went away', async () => {
    await Promise.all([echo(db, 1), echo(db, 2)]);
    const before = await backends();
    const terminated = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    expect(terminated.rowCount).toBeGreaterThanOrEqual(before);
    // Statements sent on a dead connection may fail; within a few tries, all answer again.
    const rs = await waitFor(
      'three statements to answer again',
      () => Promise.allSettled([echo(db, 7), echo(db, 8), echo(db, 9)]),
      { until: (all) => all.every((r) => r.status === 'fulfilled'), timeoutMs: 5000 },
    );
    expect(rs.every((r) => r.status === 'fulfilled')).toBe(true);
  });

  it('keeps a write that waits for a lock apart from the reads, unflagged', async () => {
    // Nothing says it writes: its text does (readsOnly).
    const locking = compiledOnce(
      (_q, key: number) =>
        sql<{ n: number }>`select 1 as n from pg_advisory_xact_lock(${key}::int)`,
    );
    await admin.query('select pg_advisory_lock(77)');
    const waiting = locking(db, 77);
    await waitFor('the write to wait for the lock', async () => {
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`,
      );
      return rows[0]?.n ?? 0;
    });
    const started = Date.now();
    const ns = Array.from({ length: 40 }, (_, i) => i);
    expect(await Promise.all(ns.map((n) => echo(db, n)))).toEqual(ns.map((n) => [{ n }]));
    expect(Date.now() - started).toBeLessThan(500);
    await admin.query('select pg_advisory_unlock(77)');
    expect(await waiting).toEqual([{ n: 1 }]);
  });
});

describe('a server that stops answering', () => {
  it('fails the statement 2 s past the timeout, then answers on another connection', async () => {
    const quick = createDatabase(url, { max: 2, timeoutMs: 200 });
    try {
      // A session whose server never cancels: it stands for a server that went silent.
      const silent = transaction(
        quick,
        async (trx) => {
          await sql`set local statement_timeout = 0`.execute(trx);
          await sql`select pg_sleep(4)`.execute(trx);
        },
        1,
      );
      const started = Date.now();
      const err = await silent.catch((e: unknown) => e);
      expect(err).toMatchObject({ message: 'Query read timeout' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
      expect(fromPgError(err)).toMatchObject({ status: 503, code: 'database_unavailable' });
      expect((await sql<{ n: number }>`select ${5}::int as n`.execute(quick)).rows).toEqual([
        { n: 5 },
      ]);
    } finally {
      await quick.destroy();
    }
  }, 15_000);
});

describe('values in and out', () => {
  it('reads every type the data layer reads as it expects', async () => {
    const { rows } = await sql<Record<string, unknown>>`select
      12345678901::int8 as big, count(*) as counted, 7::int as n, 2.5::float8 as f,
      1.50::numeric as money, true as yes, null::text as nothing,
      '2026-11-22 05:40:01.123456+00'::timestamptz as at, '{"k": [1]}'::jsonb as j,
      array['a', 'b']::text[] as tags, '\\x0102'::bytea as bytes
      from (values (1), (2)) v`.execute(db);
    expect(rows[0]).toEqual({
      big: 12345678901,
      counted: 2,
      n: 7,
      f: 2.5,
      money: '1.50',
      yes: true,
      nothing: null,
      at: new Date('2026-11-22T05:40:01.123Z'),
      j: { k: [1] },
      tags: ['a', 'b'],
      bytes: Buffer.from([1, 2]),
    });
  });

  it('binds a JSON string to a json column as that JSON, an object as its JSON', async () => {
    const { rows } = await sql<{ a: unknown; b: unknown; n: unknown }>`select
      ${JSON.stringify({ x: 1 })}::jsonb as a, ${sql.val({ y: [2] })}::jsonb as b,
      ${null}::jsonb as n`.execute(db);
    expect(rows[0]).toEqual({ a: { x: 1 }, b: { y: [2] }, n: null });
  });

  it('binds arrays of dates and of booleans as arrays', async () => {
    const ats = [new Date('2026-11-28T10:00:00.250Z'), new Date('2026-11-29T00:00:00Z')];
    const { rows } = await sql<{ at: Date; yes: boolean; n: number }>`select u.at, u.yes, u.n
      from unnest(${ats}::timestamptz[], ${[true, false]}::boolean[], ${[1, 2]}::int[])
        as u(at, yes, n) order by u.n`.execute(db);
    expect(rows).toEqual([
      { at: ats[0], yes: true, n: 1 },
      { at: ats[1], yes: false, n: 2 },
    ]);
  });

  it('binds dates, arrays, booleans and bytes', async () => {
    const at = new Date('2026-11-28T10:00:00.250Z');
    const { rows } = await sql<{ at: Date; any: boolean; yes: boolean; len: number }>`select
      ${at}::timestamptz as at, 'b' = any(${['a', 'b']}::text[]) as any,
      ${true}::boolean as yes, length(${new Uint8Array([1, 2, 3])}::bytea) as len`.execute(db);
    expect(rows[0]).toEqual({ at, any: true, yes: true, len: 3 });
  });

  it('names the constraint a write broke, as the error mapping reads it', async () => {
    // In a schema of its own: the name is taken in public.
    await sql`create schema pin`.execute(db);
    await sql`create table pin.unique_n (n int constraint teams_slug_key unique)`.execute(db);
    await sql`insert into pin.unique_n values (1)`.execute(db);
    const err = await sql`insert into pin.unique_n values (${1})`.execute(db).catch((e) => e);
    expect(err).toMatchObject({ code: '23505', constraint: 'teams_slug_key' });
    expect(fromPgError(err)).toMatchObject({ status: 409, code: 'slug_taken' });
  });

  it('counts the rows a write changed', async () => {
    await sql`create table pin_rows (n int)`.execute(db);
    await sql`insert into pin_rows values (1), (2), (3)`.execute(db);
    const res = await db
      .updateTable('pin_rows' as never)
      .set({ n: 0 } as never)
      .where('n' as never, '>', 1 as never)
      .executeTakeFirst();
    expect(res.numUpdatedRows).toBe(2n);
  });

  it('gives the bench and the tests every statement it sends', async () => {
    const seen: string[] = [];
    const counted = createDatabase(url, { max: 1, onStatement: (t) => seen.push(t) });
    try {
      await transaction(counted, (trx) => sql`select ${1}::int`.execute(trx));
      expect(seen).toEqual(['begin', 'select $1::int', 'commit']);
    } finally {
      await counted.destroy();
    }
  });

  it('has no connections once the database is destroyed', async () => {
    const short = createDatabase(url, { max: 8 });
    await Promise.all([echo(short, 1), sql`select 1`.execute(short)]);
    expect(connectionsOf(short)).toBeDefined();
    await short.destroy();
    await expect(echo(short, 1)).rejects.toThrow(/after calling end/);
  });
});
