// The one service clock. Every time rule (token and invitation expiry, rate-limit windows,
// agent liveness, back-off) reads now() from here, never Date.now(), so that the operator's
// test clock (CONTRACT 7) moves them all. The offset lives in the database so that every
// instance sharing it agrees on the time.
import { sql, type Kysely } from 'kysely';
import type { DB } from './db/schema.ts';

export interface Clock {
  now(): Date;
  /** Re-read the shared offset (after another instance advanced it). */
  refresh(): Promise<void>;
  /** Move the clock forward for every instance; only reachable with TEST_CLOCK=1. */
  advance(seconds: number): Promise<Date>;
}

export function systemClock(db: Kysely<DB>): Clock & { offsetMs(): number } {
  let offsetMs = 0;
  return {
    now: () => new Date(Date.now() + offsetMs),
    offsetMs: () => offsetMs,
    async refresh() {
      const row = await db.selectFrom('service_clock').select('offset_ms').executeTakeFirst();
      offsetMs = Number(row?.offset_ms ?? 0);
    },
    async advance(seconds: number) {
      const row = await db
        .updateTable('service_clock')
        .set({ offset_ms: sql`offset_ms + ${Math.round(seconds * 1000)}` })
        .returning('offset_ms')
        .executeTakeFirstOrThrow();
      offsetMs = Number(row.offset_ms);
      await sql`select pg_notify('frameplane_clock', ${String(offsetMs)})`.execute(db);
      return new Date(Date.now() + offsetMs);
    },
  };
}

export const addSeconds = (d: Date, s: number) => new Date(d.getTime() + s * 1000);
export const addDays = (d: Date, days: number) => addSeconds(d, days * 86400);
