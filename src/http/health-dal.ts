// The SQL of the readiness probe (health-routes.ts).
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

/** One round trip that needs nothing but a working connection. */
export async function pingDatabase(db: Queryable) {
  await sql`select 1`.execute(db);
}
