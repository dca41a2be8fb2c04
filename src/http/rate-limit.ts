// Fixed-window counters in PostgreSQL, so that every instance sharing the database shares the
// limits, and windows follow the service clock. One statement per hit. Each row says when its
// window ends (expires_at), so the minute sweep can delete ended windows (pruneRateLimits).
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { tooManyRequests } from '../errors.ts';
import {
  countHit,
  currentWindow,
  deleteCounter,
  deleteEndedWindows,
  refundHit,
} from './rate-limit-dal.ts';

export interface RateLimiter {
  /** Count one hit against `key` in its window. */
  count(key: string, windowSeconds: number): Promise<{ count: number; windowStart: Date }>;
  /** Count one hit; throws 429 once more than `limit` hits fall in the window. */
  consume(
    key: string,
    limit: number,
    windowSeconds: number,
  ): Promise<{ count: number; windowStart: Date }>;
  /** Throws 429 if `key` is already over its limit, without counting. */
  check(key: string, limit: number, windowSeconds: number): Promise<void>;
  /** Takes back one hit counted by `count`/`consume` in the window that began at `windowStart`
   *  (a hit that turned out not to count, such as a successful login). Never below zero. */
  refund(key: string, windowStart: Date): Promise<void>;
  reset(key: string): Promise<void>;
}

export function rateLimiter(db: Database, clock: Clock): RateLimiter {
  const retryAfter = (windowStart: Date, windowSeconds: number) =>
    Math.max(
      1,
      Math.ceil((windowStart.getTime() + windowSeconds * 1000 - clock.now().getTime()) / 1000),
    );

  async function count(key: string, windowSeconds: number) {
    const row = await countHit(db, key, clock.now(), windowSeconds);
    return { count: row.count, windowStart: row.window_start };
  }

  return {
    count,
    async consume(key, limit, windowSeconds) {
      const { count: n, windowStart } = await count(key, windowSeconds);
      if (n > limit) throw tooManyRequests(retryAfter(windowStart, windowSeconds));
      return { count: n, windowStart };
    },
    async check(key, limit, windowSeconds) {
      const cutoff = new Date(clock.now().getTime() - windowSeconds * 1000);
      const row = await currentWindow(db, key, cutoff);
      if (row && row.count >= limit)
        throw tooManyRequests(retryAfter(row.window_start, windowSeconds));
    },
    async refund(key, windowStart) {
      // Only in the same window: a refund that arrives after the window rolled over must not
      // take a hit off the next one.
      await refundHit(db, key, windowStart);
    },
    async reset(key) {
      await deleteCounter(db, key);
    },
  };
}

/**
 * Deletes the counters whose window has ended by `now` (service clock). Such a row counts as
 * a fresh window when next hit, so deleting it changes no answer. A row hit again meanwhile has
 * a later expires_at, and the delete re-checks it under the row lock: it stays.
 */
export async function pruneRateLimits(db: Database, now: Date): Promise<number> {
  return deleteEndedWindows(db, now);
}
