// The SQL of the rate limiter (rate-limit.ts): one row per key, a fixed window each.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/**
 * Counts one hit against `key` and returns its window. A window that ended by `now` starts
 * over at `now` with a count of one; one statement, so concurrent hits never lose a count.
 */
export async function countHit(db: Queryable, key: string, now: Date, windowSeconds: number) {
  const cutoff = new Date(now.getTime() - windowSeconds * 1000);
  const ends = new Date(now.getTime() + windowSeconds * 1000);
  const ended = sql<boolean>`rate_limits.window_start <= ${cutoff}`;
  return db
    .insertInto('rate_limits')
    .values({ key, window_start: now, count: 1, expires_at: ends })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        window_start: sql`case when ${ended} then ${now} else rate_limits.window_start end`,
        count: sql`case when ${ended} then 1 else rate_limits.count + 1 end`,
        expires_at: sql`case when ${ended} then ${ends}
          else rate_limits.window_start + make_interval(secs => ${windowSeconds}) end`,
      }),
    )
    .returning(['window_start', 'count'])
    .executeTakeFirstOrThrow();
}

/** The counter of `key` if its window began after `cutoff` (is still running). */
export function currentWindow(db: Queryable, key: string, cutoff: Date) {
  return db
    .selectFrom('rate_limits')
    .select(['window_start', 'count'])
    .where('key', '=', key)
    .where('window_start', '>', cutoff)
    .executeTakeFirst();
}

/** One hit less, only in the window that began at `windowStart`; never below zero. */
export async function refundHit(db: Queryable, key: string, windowStart: Date) {
  await db
    .updateTable('rate_limits')
    .set({ count: sql`greatest(count - 1, 0)` })
    .where('key', '=', key)
    .where('window_start', '=', windowStart)
    .execute();
}

export async function deleteCounter(db: Queryable, key: string) {
  await db.deleteFrom('rate_limits').where('key', '=', key).execute();
}

/** Deletes the counters whose window ended by `now`; returns how many. */
export async function deleteEndedWindows(db: Queryable, now: Date): Promise<number> {
  const r = await db.deleteFrom('rate_limits').where('expires_at', '<=', now).executeTakeFirst();
  return Number(r.numDeletedRows);
}
