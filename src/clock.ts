// The one service clock. Every time rule (token and invitation expiry, rate-limit windows,
// agent liveness, back-off) reads now() from here, never Date.now(), so that the operator's
// test clock (CONTRACT 7) moves them all. The offset lives in the database so that every
// instance sharing it agrees on the time.
//
// Only a service started with TEST_CLOCK=1 reads that offset. Without it the clock is the real
// time, whatever the database holds: an offset left by a test run must not move a production
// service's expiries (main.ts also clears it at start-up, see discardTestClockOffset).
import type { Kysely } from 'kysely';
import { advanceClockOffset, clearClockOffset, readClockOffset } from './db/clock-dal.ts';
import type { DB } from './db/schema.ts';

export interface Clock {
  now(): Date;
  /** Re-read the shared offset (after another instance advanced it). */
  refresh(): Promise<void>;
  /** Move the clock forward for every instance; only reachable with TEST_CLOCK=1. */
  advance(seconds: number): Promise<Date>;
}

export interface ClockOptions {
  /** TEST_CLOCK=1: follow (and allow moving) the offset stored in the database. */
  testClock: boolean;
}

export function systemClock(
  db: Kysely<DB>,
  { testClock }: ClockOptions,
): Clock & { offsetMs(): number } {
  let offsetMs = 0;
  return {
    now: () => new Date(Date.now() + offsetMs),
    offsetMs: () => offsetMs,
    async refresh() {
      if (testClock) offsetMs = await readClockOffset(db);
    },
    async advance(seconds: number) {
      if (!testClock) throw new Error('the test clock is disabled (TEST_CLOCK is not 1)');
      offsetMs = await advanceClockOffset(db, seconds * 1000);
      return new Date(Date.now() + offsetMs);
    },
  };
}

/**
 * At the start of a service without TEST_CLOCK: sets a stored test-clock offset back to zero,
 * so that the database says what every instance now does. Returns the offset dropped.
 */
export function discardTestClockOffset(db: Kysely<DB>): Promise<number> {
  return clearClockOffset(db);
}

export const addSeconds = (d: Date, s: number) => new Date(d.getTime() + s * 1000);
export const addDays = (d: Date, days: number) => addSeconds(d, days * 86400);
