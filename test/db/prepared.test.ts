// Parameterised statements run as named prepared statements (src/db/prepared.ts): they are
// planned once per connection, keep working when a migration changes a table under them, and
// leave parameterless statements and explicit query configs alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type pg from 'pg';
import { createDatabase, createPool, transaction, type Database } from '../../src/db/database.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { at } from '../helpers/checked.ts';

let pool: pg.Pool;
let db: Database;

beforeAll(async () => {
  pool = createPool(await freshDatabaseUrl(), { max: 1 }); // one connection: every statement meets the same session
  db = createDatabase(pool);
  await sql`create table gadgets (id int primary key, name text)`.execute(db);
  await sql`insert into gadgets values (1, 'one'), (2, 'two')`.execute(db);
});
afterAll(() => db.destroy());

const prepared = async () =>
  (
    await sql<{
      name: string;
      statement: string;
    }>`select name, statement from pg_prepared_statements`.execute(db)
  ).rows;

describe('prepared statements', () => {
  it('prepares a parameterised statement once and reuses it', async () => {
    for (let i = 0; i < 8; i++)
      expect(
        (await sql<{ name: string }>`select name from gadgets where id = ${1}`.execute(db)).rows,
      ).toEqual([{ name: 'one' }]);
    const mine = (await prepared()).filter((p) =>
      p.statement.includes('from gadgets where id = $1'),
    );
    expect(mine).toHaveLength(1);
    expect(at(mine, 0).name).toMatch(/^fp\d+_0$/);
  });

  it('leaves statements without parameters unnamed', async () => {
    await sql`select count(*) from gadgets`.execute(db);
    expect((await prepared()).some((p) => p.statement.includes('count(*) from gadgets'))).toBe(
      false,
    );
  });

  it('survives a migration that changes the result of a prepared select *', async () => {
    const read = () =>
      db
        .selectFrom('gadgets' as never)
        .selectAll()
        .where('id' as never, '=', 2 as never)
        .execute();
    expect(await read()).toEqual([{ id: 2, name: 'two' }]);
    await sql`alter table gadgets add column colour text default 'red'`.execute(db);
    expect(await read()).toEqual([{ id: 2, name: 'two', colour: 'red' }]);

    await sql`alter table gadgets add column size int default 3`.execute(db);
    // Inside a transaction the statement cannot simply run again: transaction() retries it whole.
    const rows = await transaction(db, async (trx) =>
      trx
        .selectFrom('gadgets' as never)
        .selectAll()
        .where('id' as never, '=', 2 as never)
        .execute(),
    );
    expect(rows).toEqual([{ id: 2, name: 'two', colour: 'red', size: 3 }]);
    // Both times PostgreSQL refused the stale plan and the statement was prepared anew.
    const names = (await prepared())
      .filter((p) => p.statement.includes('select * from "gadgets"'))
      .map((p) => p.name.replace(/^fp\d+/, ''));
    expect(names.sort()).toEqual(['_0', '_1', '_2']);
  });

  it("asks for a named statement's columns once per connection, and reads its rows by them", async () => {
    const client = await pool.connect();
    const connection = (client as unknown as { connection: NodeJS.EventEmitter }).connection;
    let descriptions = 0;
    const counted = () => descriptions++;
    connection.on('rowDescription', counted);
    try {
      const text = 'select id, name, $1::int as n, now() as at from gadgets where id = $2';
      for (let i = 0; i < 5; i++) {
        const res = await client.query(text, [i, 1]);
        expect(res.rows).toEqual([{ id: 1, name: 'one', n: i, at: expect.any(Date) }]);
        expect(res.fields.map((f) => f.name)).toEqual(['id', 'name', 'n', 'at']);
      }
      // Another statement on the same connection is described on its own first run.
      expect((await client.query('select name from gadgets where id = $1', [2])).rows).toEqual([
        { name: 'two' },
      ]);
      expect(descriptions).toBe(2);
    } finally {
      connection.off('rowDescription', counted);
      client.release();
    }
  });

  it('passes a query config through untouched', async () => {
    const client = await pool.connect();
    try {
      const res = await client.query({ text: 'select $1::int + 1 as n', values: [41] });
      expect(res.rows).toEqual([{ n: 42 }]);
    } finally {
      client.release();
    }
  });
});
