// Hot reads of a fixed shape are built and compiled by Kysely once, not on every request.
// Building and compiling a read with joins, subqueries and the role is a large share of the
// service's CPU per request, and only the values bound to it change between calls. It relies
// on Kysely binding each value as a parameter (never writing it into the text) and on running
// a raw CompiledQuery on whatever executor it is given (a transaction's); both are pinned in
// test/db/library-internals.test.ts. Outside a transaction it goes straight to the connections
// (connections.ts decides where: a read pipelined, a write on its own).
import { CompiledQuery, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import { connectionsOf, type Queryable } from './database.ts';
import type { DB } from './schema.ts';

type Scalar = string | number | boolean | null;
type Value = Scalar | readonly Scalar[] | Uint8Array;
type Slot = { arg: number } | { value: unknown };

const marker = (i: number) => `\u0000fp-arg-${i}\u0000`;

/**
 * Wraps `build`, whose query must have the same shape whatever its arguments are: each
 * argument may only be bound as a value (never change the SQL text, never pick a branch).
 * The first call builds it with markers for the arguments and remembers where each is bound;
 * later calls bind the new values to the same compiled text.
 */
export function compiledOnce<A extends Value[], R>(
  build: (q: Kysely<DB>, ...args: A) => Compilable<R> | RawBuilder<R>,
) {
  let compiled: { sql: string; slots: Slot[] } | undefined;

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
    return { sql, slots };
  }

  return async (q: Queryable, ...args: A): Promise<R[]> => {
    compiled ??= compile(q, args.length);
    const parameters = compiled.slots.map((s) => ('arg' in s ? args[s.arg] : s.value));
    const connections = connectionsOf(q);
    // Kysely's executor around the statement (connection provider, result wrapping) was 9 % of
    // what a read allocated in the bench's allocation profile, for nothing used here.
    if (connections) return (await connections.query<R>(compiled.sql, parameters)).rows;
    return (await q.executeQuery<R>(CompiledQuery.raw(compiled.sql, parameters))).rows;
  };
}
