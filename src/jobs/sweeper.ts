// The time rules that need a job: e-mails whose delivery job was lost are queued again; a replica stuck pulling its image for more than three
// minutes trips the back-off; cloud frames wait for a cloud agent; idempotency keys, logs and
// ended rate-limit windows expire. Runs every minute (see jobs/worker.ts), when a pull deadline falls due, and at once when the
// operator advances the test clock. Other time rules (expiry, agent liveness) are derived on read.
import { sql } from 'kysely';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { placeUnplacedFrames } from '../frames/placement.ts';
import { tripBackoff } from '../agent-api/sync-reports.ts';
import { PULL_TIMEOUT_SECONDS, pullDeadline, pullStuck } from '../frames/backoff.ts';
import { refreshStatus } from '../frames/frame-events.ts';
import { requeueStuckEmails } from '../mail/deliver.ts';
import { pruneRateLimits } from '../http/rate-limit.ts';

export const IDEMPOTENCY_HOURS = 24;
export const LOG_RETENTION = { days: 7, linesPerFrame: 10_000 };

export function createSweeper({ db, clock }: { db: Database; clock: Clock }) {
  async function tripStuckPulls(now: Date) {
    const cutoff = new Date(now.getTime() - PULL_TIMEOUT_SECONDS * 1000);
    const candidates = await db
      .selectFrom('frame_replicas as r')
      .innerJoin('frames as f', 'f.id', 'r.frame_id')
      .select('f.id')
      .distinct()
      .where('r.state', '=', 'pulling')
      .where('r.since', '<', cutoff)
      .where('f.desired_state', '=', 'running')
      .whereRef(
        'r.generation',
        '>=',
        sql`(select max(d.generation) from deployments d where d.frame_id = f.id)`,
      )
      .execute();
    for (const { id } of candidates) {
      await transaction(db, async (trx) => {
        const f = await trx
          .selectFrom('frames')
          .select(['id', 'desired_state'])
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!f || f.desired_state !== 'running') return;
        const pulling = await trx
          .selectFrom('frame_replicas')
          .select('since')
          .where('frame_id', '=', id)
          .where('state', '=', 'pulling')
          .orderBy('since')
          .executeTakeFirst();
        if (!pulling || !pullStuck(pulling.since, now)) return;
        await tripBackoff(trx, id, now, {
          cause: 'image_pull_timeout',
          pulling_since: pulling.since.toISOString(),
        });
        await refreshStatus(trx, [id], now);
      });
    }
  }

  async function expire(now: Date) {
    await db
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_HOURS * 3600_000))
      .execute();
    await db
      .deleteFrom('frame_logs')
      .where('at', '<', new Date(now.getTime() - LOG_RETENTION.days * 86400_000))
      .execute();
    await sql`delete from frame_logs l using (
      select frame_id, max(id) - ${LOG_RETENTION.linesPerFrame} as floor from frame_logs group by frame_id
      having count(*) > ${LOG_RETENTION.linesPerFrame}) x where l.frame_id = x.frame_id and l.id <= x.floor`.execute(
      db,
    );
    await pruneRateLimits(db, now);
  }

  return {
    async runDue(now: Date = clock.now()) {
      await tripStuckPulls(now);
      await transaction(db, (trx) => placeUnplacedFrames(trx, now));
      await expire(now);
      await requeueStuckEmails(db, now);
    },

    /** Queues a sweep for when a pull that began at `since` would be stuck. */
    async schedulePullCheck(q: Queryable, since: Date) {
      const due = pullDeadline(since);
      const runAt = new Date(Date.now() + (due.getTime() - clock.now().getTime()));
      await sql`select graphile_worker.add_job('sweep', '{}'::json, run_at := ${runAt}::timestamptz,
        job_key := ${`pull-check-${due.getTime()}`}::text)`.execute(q);
    },
  };
}

export type Sweeper = ReturnType<typeof createSweeper>;
