// The time rules that need a job: e-mails whose delivery job was lost are queued again; a replica
// stuck pulling its image for more than three minutes trips the back-off; cloud frames wait for
// a cloud agent; idempotency keys, logs, frame metrics, ended rate-limit windows and idle
// previews expire.
// Runs every minute (see jobs/worker.ts), when a pull deadline falls due, and at once when the
// operator advances the test clock. Other time rules (expiry, agent liveness) are derived on read.
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { tripBackoff } from '../agent-api/sync-reports.ts';
import { PULL_TIMEOUT_SECONDS, pullDeadline, pullStuck } from '../frames/backoff.ts';
import { refreshStatus } from '../frames/frame-events.ts';
import { placeUnplacedFrames } from '../frames/placement.ts';
import { requeueStuckEmails } from '../mail/deliver.ts';
import { expiredPreviews } from '../previews/previews-dal.ts';
import { removePreview } from '../previews/previews.ts';
import { pruneRateLimits } from '../http/rate-limit.ts';
import {
  deleteIdempotencyKeysBefore,
  framesPullingSince,
  lockFrameDesiredState,
  oldestPullSince,
  queueSweep,
} from './sweeper-dal.ts';
import { pruneLogs } from './log-retention-dal.ts';
import { pruneMetrics } from './metrics-retention-dal.ts';
import type { LogRetention, MetricsRetention } from '../config.ts';

export const IDEMPOTENCY_HOURS = 24;

interface Deps {
  db: Database;
  clock: Clock;
  /** LOG_RETENTION_DAYS, LOG_RETENTION_LINES_PER_FRAME, LOG_RETENTION_BYTES_PER_FRAME. */
  logRetention: LogRetention;
  /** METRICS_MINUTE_RETENTION_HOURS, METRICS_HOUR_RETENTION_DAYS. */
  metricsRetention: MetricsRetention;
}

export function createSweeper({ db, clock, logRetention, metricsRetention }: Deps) {
  async function tripStuckPulls(now: Date) {
    const cutoff = new Date(now.getTime() - PULL_TIMEOUT_SECONDS * 1000);
    for (const id of await framesPullingSince(db, cutoff)) {
      await transaction(db, async (trx) => {
        const f = await lockFrameDesiredState(trx, id);
        if (f?.desired_state !== 'running') return;
        const since = await oldestPullSince(trx, id);
        if (!since || !pullStuck(since, now)) return;
        await tripBackoff(trx, id, now, {
          cause: 'image_pull_timeout',
          pulling_since: since.toISOString(),
        });
        await refreshStatus(trx, [id], now);
      });
    }
  }

  async function expire(now: Date) {
    await deleteIdempotencyKeysBefore(db, new Date(now.getTime() - IDEMPOTENCY_HOURS * 3600_000));
    await pruneLogs(db, now, logRetention);
    await pruneMetrics(db, now, metricsRetention);
    await pruneRateLimits(db, now);
  }

  /** Previews without a push for their parent's ttl_days go, each in its own transaction. */
  async function expirePreviews(now: Date) {
    for (const id of await expiredPreviews(db, now))
      await transaction(db, async (trx) => {
        const [still] = await expiredPreviews(trx, now, id);
        if (still) await removePreview(trx, id, now, 'expired');
      });
  }

  return {
    async runDue(now: Date = clock.now()) {
      await tripStuckPulls(now);
      await transaction(db, (trx) => placeUnplacedFrames(trx, now));
      await expire(now);
      await expirePreviews(now);
      await requeueStuckEmails(db, now);
    },

    /** Queues a sweep for when a pull that began at `since` would be stuck. */
    async schedulePullCheck(q: Queryable, since: Date) {
      const due = pullDeadline(since);
      const runAt = new Date(Date.now() + (due.getTime() - clock.now().getTime()));
      await queueSweep(q, runAt, `pull-check-${due.getTime()}`);
    },
  };
}

export type Sweeper = ReturnType<typeof createSweeper>;
