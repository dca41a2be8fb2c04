// Hot reads of a fixed shape are built and compiled by Kysely once, not on every request.
// Building and compiling a read with joins, subqueries and the role is a large share of the
// service's CPU per request, and only the values bound to it change between calls. It relies
// on Kysely binding each value as a parameter (never writing it into the text) and on running
// a raw CompiledQuery on whatever executor it is given (a transaction's); both are pinned in
// test/db/library-internals.test.ts. Outside a transaction a read runs on the pool's read lane
// (read-lane.ts), or on a pooled client when the lane is full; a write on a pooled client.
import { CompiledQuery, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import { laneOf, poolOf, type Queryable } from './database.ts';
import type { DB } from './schema.ts';

type Scalar = string | number | boolean | null;
type Value = Scalar | readonly Scalar[] | Uint8Array;
type Slot = { arg: number } | { value: unknown };

const marker = (i: number) => `\u0000fp-arg-${i}\u0000`;

// What may change rows or wait for a lock: a data-modifying statement (also inside WITH), a
// row-locking clause, an advisory lock. Values are bound, never in the text, so only the
// statement's own words can match; a false match only costs the lane, never correctness.
const WRITES =
  /\b(insert|update|delete|merge|truncate|lock)\b|\bfor\s+(no\s+key\s+)?(update|share|key\s+share)\b|pg_advisory/i;

/** Whether a statement only reads: a SELECT (or a WITH of SELECTs) that takes no lock. */
export function readsOnly(sql: string): boolean {
  return /^\s*(select|with)\b/i.test(sql) && !WRITES.test(sql);
}

/**
 * Wraps `build`, whose query must have the same shape whatever its arguments are: each
 * argument may only be bound as a value (never change the SQL text, never pick a branch).
 * The first call builds it with markers for the arguments and remembers where each is bound;
 * later calls bind the new values to the same compiled text.
 *
 * A statement that may wait for a lock (anything but a plain read: readsOnly) is kept off the
 * read lane, where it would hold up the reads pipelined behind it on its connection for as
 * long as it waits. The compiled text decides, not the caller: a write cannot slip onto it.
 */
export function compiledOnce<A extends Value[], R>(
  build: (q: Kysely<DB>, ...args: A) => Compilable<R> | RawBuilder<R>,
) {
  let compiled: { sql: string; slots: Slot[]; write: boolean } | undefined;

  function compile(q: Queryable, count: number) {
    const markers = Array.from({ length: count }, (_, i) => marker(i)) as unknown as A;
    // A raw statement (sql`…`) compiles against the executor it is given; a builder has its own.
    const { sql, parameters } = build(q as Kysely<DB>, ...markers).compile(q);
    if (sql.includes('\u0000fp-arg-'))
      throw new Error('compiledOnce: an argument was written into the SQL text instead of bound');
    const slots = parameters.map((p): Slot => {
      const i = markers.indexOf(p as Value);
      if (i >= 0) return { arg: i };
      if (JSON.stringify(p)?.includes('\\u0000fp-arg-'))
        throw new Error('compiledOnce: an argument was bound inside another value');
      return { value: p };
    });
    return { sql, slots, write: !readsOnly(sql) };
  }

  return async (q: Queryable, ...args: A): Promise<R[]> => {
    compiled ??= compile(q, args.length);
    const parameters = compiled.slots.map((s) => ('arg' in s ? args[s.arg] : s.value));
    const pool = poolOf(q);
    if (!pool) return (await q.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters))).rows;
    // Pipelined with other statements when the pool has a lane with room (read-lane.ts).
    const piped = compiled.write ? undefined : laneOf(pool)?.query<R>(compiled.sql, parameters);
    if (piped) return await piped;
    // Outside a transaction, straight to a pooled client with the call Kysely's driver makes,
    // client.query(text, values), so the statement is named and prepared all the same
    // (prepared.ts). Kysely's executor around it (connection provider, result wrapping) was
    // 9 % of what a read allocated in the bench's allocation profile, for nothing used here.
    const client = await pool.connect();
    try {
      return (await client.query(compiled.sql, parameters)).rows as R[];
    } finally {
      client.release();
    }
  };
}
