// The counts a scrape reads: one statement each, counts only (no rows leave the database), each
// in a transaction of its own whose statement_timeout bounds it on the server.
import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/schema.ts';

/** Runs `read` with PostgreSQL cancelling any statement of it that runs past `ms`. */
export function boundedRead<T>(
  db: Database,
  ms: number,
  read: (trx: Transaction<DB>) => Promise<T>,
) {
  return db.transaction().execute(async (trx) => {
    await sql`set local statement_timeout = ${sql.lit(Math.max(1, Math.round(ms)))}`.execute(trx);
    return read(trx);
  });
}

/** Registered agents and those whose last call is at `onlineSince` or later, by kind. */
export async function agentCounts(q: Transaction<DB>, onlineSince: Date) {
  const { rows } = await sql<{ kind: string; registered: number; online: number }>`
    select kind, count(*) as registered,
      count(*) filter (where last_seen_at >= ${onlineSince}) as online
    from agents group by kind`.execute(q);
  return rows;
}

/**
 * graphile-worker's queue through its public view, by state, on the database's clock (the one
 * the queue runs jobs by): ready to run, scheduled later, locked by a worker, given up.
 */
export async function queueCounts(q: Transaction<DB>) {
  const { rows } = await sql<Record<'ready' | 'scheduled' | 'locked' | 'failed', number>>`
    select
      count(*) filter (where locked_at is null and attempts < max_attempts and run_at <= now())
        as ready,
      count(*) filter (where locked_at is null and attempts < max_attempts and run_at > now())
        as scheduled,
      count(*) filter (where locked_at is not null) as locked,
      count(*) filter (where locked_at is null and attempts >= max_attempts) as failed
    from graphile_worker.jobs`.execute(q);
  return rows[0] ?? { ready: 0, scheduled: 0, locked: 0, failed: 0 };
}

/**
 * The hostnames the edges route: every frame placed on an agent has its own, and each verified
 * domain of such a frame is one more (agent-api/desired-state-dal.ts tells agents the same).
 */
export async function routeCounts(q: Transaction<DB>) {
  const { rows } = await sql<{ frames: number; domains: number }>`
    select
      (select count(*) from frames where agent_id is not null) as frames,
      (select count(*) from domains d join frames f on f.id = d.frame_id
        where f.agent_id is not null and d.verified_at is not null) as domains`.execute(q);
  return rows[0] ?? { frames: 0, domains: 0 };
}

/**
 * The edges' certificates by state at `now`, and the earliest expiry of those held. A host whose
 * certificate is held is valid or expired whatever its renewal's failures; one without is
 * pending until an order for it fails, failing after.
 */
export async function certificateCounts(q: Transaction<DB>, now: Date) {
  const { rows } = await sql<{
    valid: number;
    expired: number;
    pending: number;
    failing: number;
    earliest: Date | null;
  }>`
    select
      count(*) filter (where certificate is not null and not_after > ${now}) as valid,
      count(*) filter (where certificate is not null and not_after <= ${now}) as expired,
      count(*) filter (where certificate is null and failures = 0) as pending,
      count(*) filter (where certificate is null and failures > 0) as failing,
      min(not_after) filter (where certificate is not null) as earliest
    from edge_certificates`.execute(q);
  return rows[0] ?? { valid: 0, expired: 0, pending: 0, failing: 0, earliest: null };
}
