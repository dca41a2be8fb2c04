// Queries compiled once (src/db/compiled.ts) bind each call's values to the text compiled on the
// first call, inside transactions too, and refuse a query whose text depends on its arguments.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDatabase, transaction, type Database } from '../../src/db/database.ts';
import { compiledOnce } from '../../src/db/compiled.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';

let db: Database;

beforeAll(async () => {
  db = createDatabase(await freshDatabaseUrl(), { max: 2 });
  // A users row is enough: the builder is typed by our schema.
  for (const [id, name] of [
    ['u1', 'Ada'],
    ['u2', 'Grace'],
    ['u3', 'Edsger'],
  ]) {
    await sql`insert into users (id, email, name, password_hash, created_at) values (${id}, ${`${id}@example.com`}, ${name}, 'x', now())`.execute(
      db,
    );
  }
});
afterAll(() => db.destroy());

describe('compiledOnce', () => {
  const byIdAndName = compiledOnce((q, id: string, notName: string, limit: number) =>
    q
      .selectFrom('users')
      .select(['id', 'name'])
      .where('id', '>=', id)
      .where('name', '!=', notName)
      .where('email', 'like', '%@example.com')
      .orderBy('id')
      .limit(limit),
  );

  it('binds every call its own values, constants included', async () => {
    expect(await byIdAndName(db, 'u1', 'Grace', 10)).toEqual([
      { id: 'u1', name: 'Ada' },
      { id: 'u3', name: 'Edsger' },
    ]);
    expect(await byIdAndName(db, 'u2', 'Nobody', 1)).toEqual([{ id: 'u2', name: 'Grace' }]);
    expect(await byIdAndName(db, 'u9', 'Ada', 5)).toEqual([]);
  });

  it('runs inside a transaction on the transaction', async () => {
    const seen = await transaction(db, async (trx) => {
      await trx.updateTable('users').set({ name: 'Renamed' }).where('id', '=', 'u3').execute();
      return byIdAndName(trx, 'u3', 'Ada', 1);
    });
    expect(seen).toEqual([{ id: 'u3', name: 'Renamed' }]);
  });

  it('refuses an argument written into the text rather than bound', async () => {
    const byColumn = compiledOnce((q, column: string) =>
      q.selectFrom('users').select(sql.ref(column).as('x')),
    );
    await expect(byColumn(db, 'name')).rejects.toThrow(/written into the SQL text/);
  });

  it('runs outside a transaction as a prepared statement, prepared once', async () => {
    const single = createDatabase(await freshDatabaseUrl(), { max: 1 });
    try {
      await sql`insert into users (id, email, name, password_hash, created_at) values ('v1', 'v1@example.com', 'Vera', 'x', now())`.execute(
        single,
      );
      for (let i = 0; i < 3; i++) expect(await byIdAndName(single, 'v1', 'x', 1)).toHaveLength(1);
      const prepared = await sql<{ n: number }>`select count(*)::int as n
        from pg_prepared_statements where statement like '%"email" like%'`.execute(single);
      expect(prepared.rows[0]?.n).toBe(1);
    } finally {
      await single.destroy();
    }
  });
});
