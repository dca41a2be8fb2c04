// Background work runs from graphile-worker, a PostgreSQL-backed queue: jobs are rows, added
// in the same transaction as the change that needs them, and any number of service instances
// can share the queue (SKIP LOCKED). Tasks are thin: they call services.
import { run, Logger, parseCronItems, type Runner, type TaskList } from 'graphile-worker';
import type pg from 'pg';
import type { Logger as Pino } from 'pino';

export interface JobTasks {
  /** Delivers one outbox e-mail; throws to be retried with back-off. */
  send_email(emailId: string): Promise<void>;
  /** Applies the time rules that fall due (see jobs/sweeper.ts). */
  sweep(): Promise<void>;
}

export async function startWorker(pool: pg.Pool, tasks: JobTasks, log: Pino, concurrency = 4): Promise<Runner> {
  const taskList: TaskList = {
    send_email: async (payload) => tasks.send_email((payload as { email_id: string }).email_id),
    sweep: async () => tasks.sweep(),
  };
  const logger = new Logger((scope) => (level, message, meta) => {
    const child = log.child({ worker: scope.label ?? 'jobs' });
    if (level === 'error') child.error(meta ?? {}, message);
    else if (level === 'warning') child.warn(meta ?? {}, message);
    else child.debug(meta ?? {}, message);
  });
  return run({
    pgPool: pool, taskList, concurrency, logger, pollInterval: 1000, noHandleSignals: true,
    // Every minute, on exactly one instance (graphile-worker's cron takes a lock per run).
    parsedCronItems: parseCronItems([{ task: 'sweep', match: '* * * * *', options: { backfillPeriod: 0 } }]),
  });
}
