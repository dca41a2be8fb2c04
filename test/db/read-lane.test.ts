// The read lane (src/db/read-lane.ts): statements outside transactions pipelined on a few
// connections. Each statement gets its own answer and its own error, a lost connection is
// replaced, a full lane sends statements to the pool, a write waiting for a lock holds up no
// read, and the lane counts in the pool's size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase, createPool, laneOf, type Database } from '../../src/db/database.ts';
import { compiledOnce } from '../../src/db/compiled.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';

let url: string;
let pool: pg.Pool;
let db: Database;
let admin: pg.Client;

/**
 * How many client backends the database has, `admin`'s aside. Only clients: an autovacuum
 * worker on this database shows in pg_stat_activity too (a run counted 9 of 8).
 */
async function backends() {
  const { rows } = await admin.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid()
        and backend_type = 'client backend'`,
  );
  return rows[0]?.n ?? 0;
}

/**
 * Opens both of the lane's connections (a statement finding one closed opens it) and waits
 * until both are open: then nine statements sent at once all go on the lane, where one
 * connection takes eight (its MAX_WAITING) and the lane answers the ninth undefined.
 */
async function openLane() {
  await Promise.all([echo(db, 0), echo(db, 0)]);
  await waitFor(
    "both of the lane's connections to be open",
    async () => {
      const sent = Array.from({ length: 9 }, () => lane().query('select 1', []));
      await Promise.all(sent);
      return sent.filter((q) => q === undefined).length;
    },
    { until: (refused) => refused === 0 },
  );
}

const echo = compiledOnce((_q, n: number) => sql<{ n: number }>`select ${n}::int as n`);
const inverse = compiledOnce((_q, n: number) => sql<{ x: number }>`select 100 / ${n}::int as x`);
const sleepy = compiledOnce(
  (_q, s: number) => sql<{ n: number }>`select 1 as n from pg_sleep(${s}::float8)`,
);

function lane() {
  const l = laneOf(pool);
  if (!l) throw new Error('a pool of 8 connections has a read lane');
  return l;
}

beforeAll(async () => {
  url = await freshDatabaseUrl();
  pool = createPool(url, { max: 8 });
  db = createDatabase(pool);
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await db.destroy();
});

describe('read lane', () => {
  it('answers each of many concurrent statements with its own rows, on two connections', async () => {
    await openLane();
    const ns = Array.from({ length: 300 }, (_, i) => i);
    const answers = await Promise.all(ns.map((n) => echo(db, n)));
    expect(answers).toEqual(ns.map((n) => [{ n }]));
    // The pool holds 6 at most, the lane 2: no more than 8 backends ever.
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

  it('replaces a connection whose server went away', async () => {
    await Promise.all([echo(db, 1), echo(db, 2)]);
    const before = await backends();
    const terminated = await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    expect(terminated.rowCount).toBe(before);
    // Statements sent on a dead connection may fail; within a few tries, all answer again.
    const rs = await waitFor(
      'three statements to answer on the lane again',
      () => Promise.allSettled([echo(db, 7), echo(db, 8), echo(db, 9)]),
      { until: (all) => all.every((r) => r.status === 'fulfilled'), timeoutMs: 5000 },
    );
    expect(rs.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(await lane().query<{ n: number }>('select 3 as n', [])).toEqual([{ n: 3 }]);
  });

  it('sends statements to the pool when every connection has 8 waiting', async () => {
    await openLane();
    const held = Array.from({ length: 16 }, () => sleepy(db, 0.05));
    expect(lane().query('select 1', [])).toBeUndefined();
    // The pool answers meanwhile: it is not behind the lane's sleepers.
    const started = Date.now();
    expect(await echo(db, 42)).toEqual([{ n: 42 }]);
    expect(Date.now() - started).toBeLessThan(250);
    await Promise.all(held);
    const again = lane().query('select 1 as n', []);
    expect(again).toBeDefined();
    expect(await again).toEqual([{ n: 1 }]);
  });

  it('keeps a write that waits for a lock off the lane, ahead of no read, unflagged', async () => {
    // Nothing says it writes: its compiled text does (readsOnly).
    const locking = compiledOnce(
      (_q, key: number) =>
        sql<{ n: number }>`select 1 as n from pg_advisory_xact_lock(${key}::int)`,
    );
    await openLane();
    await admin.query('select pg_advisory_lock(77)');
    const waiting = locking(db, 77);
    await waitFor('the write to wait for the lock', async () => {
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`,
      );
      return rows[0]?.n ?? 0;
    });
    const started = Date.now();
    const ns = Array.from({ length: 14 }, (_, i) => i);
    expect(await Promise.all(ns.map((n) => echo(db, n)))).toEqual(ns.map((n) => [{ n }]));
    expect(Date.now() - started).toBeLessThan(250);
    await admin.query('select pg_advisory_unlock(77)');
    expect(await waiting).toEqual([{ n: 1 }]);
  });

  it('is not made for a pool of fewer than 4 connections, and counts in the size', async () => {
    const small = createPool(url, { max: 3 });
    expect(laneOf(small)).toBeUndefined();
    await small.end();
    const four = createPool(url, { max: 4 });
    expect(laneOf(four)).toBeDefined();
    expect(four.options.max).toBe(3);
    await four.end();
  });
});
