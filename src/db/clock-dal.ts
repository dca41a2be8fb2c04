// The SQL of the service clock (src/clock.ts): the one-row `service_clock` table holds the test
// clock's offset, shared by every instance on the database.
import { sql } from 'kysely';
import type { Queryable } from './database.ts';

export async function readClockOffset(db: Queryable): Promise<number> {
  const row = await db.selectFrom('service_clock').select('offset_ms').executeTakeFirst();
  return Number(row?.offset_ms ?? 0);
}

/** Adds `ms` to the offset and tells the other instances (LISTEN frameplane_clock). */
export async function advanceClockOffset(db: Queryable, ms: number): Promise<number> {
  const row = await db
    .updateTable('service_clock')
    .set({ offset_ms: sql`offset_ms + ${Math.round(ms)}` })
    .returning('offset_ms')
    .executeTakeFirstOrThrow();
  const offsetMs = Number(row.offset_ms);
  await sql`select pg_notify('frameplane_clock', ${String(offsetMs)})`.execute(db);
  return offsetMs;
}

/** Sets the offset back to zero; returns the offset it dropped (0 when there was none). */
export async function clearClockOffset(db: Queryable): Promise<number> {
  const { rows } = await sql<{ dropped: string }>`
    update service_clock c set offset_ms = 0
    from (select id, offset_ms from service_clock) old
    where c.id = old.id and c.offset_ms <> 0
    returning old.offset_ms as dropped`.execute(db);
  return Number(rows[0]?.dropped ?? 0);
}
