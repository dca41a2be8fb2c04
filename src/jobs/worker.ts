// Background work runs from graphile-worker, a PostgreSQL-backed queue: jobs are rows, added
// in the same transaction as the change that needs them, and any number of service instances
// can share the queue (SKIP LOCKED). Tasks are thin: they call services.
//
// Two things here outlive a database outage that graphile-worker alone does not:
// - The minute sweep is asked for by our own timer, not graphile-worker's cron: when the
//   database is away at a minute boundary, that cron stops the runner and leaves a rejected
//   promise nobody handles, which ends the process.
// - A runner that stops on an error is started again, after a pause, for as long as the
//   service runs.
import { run, Logger, type Runner, type TaskList, type WorkerEvents } from 'graphile-worker';
import type pg from 'pg';
import type { Logger as Pino } from 'pino';
import { askForMinuteSweep } from './sweeper-dal.ts';

export interface JobTasks {
  /** Delivers one outbox e-mail; throws to be retried with back-off. */
  send_email(emailId: string): Promise<void>;
  /** Applies the time rules that fall due (see jobs/sweeper.ts). */
  sweep(): Promise<void>;
  /** Orders the edges' certificates that are due (certificates/); only with ACME. */
  issue_certificates?(): Promise<void>;
  /** One try of a notification delivery (notifications/delivery.ts). */
  deliver_notification?(deliveryId: string): Promise<void>;
}

export interface Worker {
  stop(): Promise<void>;
  /** Settles once the worker has stopped and released its connections. */
  promise: Promise<void>;
}

const SWEEP_EVERY_MS = 60_000;
const RESTART_AFTER_MS = 5_000;

export async function startWorker(
  pool: pg.Pool,
  tasks: JobTasks,
  log: Pino,
  concurrency = 4,
  /** Where graphile-worker tells of its jobs (the metrics count failures); kept across restarts. */
  events?: WorkerEvents,
): Promise<Worker> {
  const taskList: TaskList = {
    send_email: async (payload) => tasks.send_email((payload as { email_id: string }).email_id),
    sweep: async () => tasks.sweep(),
    ...(tasks.issue_certificates ? { issue_certificates: tasks.issue_certificates } : {}),
    ...(tasks.deliver_notification
      ? {
          deliver_notification: async (payload: unknown) =>
            tasks.deliver_notification?.((payload as { delivery_id: string }).delivery_id),
        }
      : {}),
  };
  const logger = new Logger((scope) => (level, message, meta) => {
    const child = log.child({ worker: scope.label ?? 'jobs' });
    if (level === 'error') child.error(meta ?? {}, message);
    else if (level === 'warning') child.warn(meta ?? {}, message);
    else child.debug(meta ?? {}, message);
  });
  const start = () =>
    run({
      pgPool: pool,
      taskList,
      concurrency,
      logger,
      pollInterval: 1000,
      noHandleSignals: true,
      ...(events ? { events } : {}),
    });

  let stopping = false;
  let runner: Runner = await start();
  let restartTimer: NodeJS.Timeout | undefined;
  let settled!: () => void;
  const promise = new Promise<void>((resolve) => {
    settled = resolve;
  });

  const supervise = (r: Runner) => {
    r.promise.then(
      () => {
        if (stopping) settled();
      },
      (err: unknown) => {
        if (stopping) return settled();
        log.error(
          { err },
          `job worker stopped on an error; starting it again in ${RESTART_AFTER_MS / 1000} s`,
        );
        restartTimer = setTimeout(function restart() {
          if (stopping) return settled();
          start().then(
            (next) => {
              runner = next;
              supervise(next);
            },
            (e: unknown) => {
              log.warn({ err: e }, 'job worker not started yet; trying again');
              restartTimer = setTimeout(restart, RESTART_AFTER_MS);
            },
          );
        }, RESTART_AFTER_MS);
      },
    );
  };
  supervise(runner);

  // One sweep per minute across every instance: each asks for it at the next minute boundary
  // under one job key, so the asks of several instances are one job.
  const askForSweep = () => {
    const next = new Date(Math.ceil((Date.now() + 1) / SWEEP_EVERY_MS) * SWEEP_EVERY_MS);
    askForMinuteSweep(pool, next).catch((err: Error) =>
      log.warn(
        { err: err.message },
        'could not schedule the minute sweep; trying again in a minute',
      ),
    );
  };
  askForSweep();
  const sweepTimer = setInterval(askForSweep, SWEEP_EVERY_MS);
  sweepTimer.unref();

  return {
    promise,
    async stop() {
      if (stopping) return promise;
      stopping = true;
      clearInterval(sweepTimer);
      clearTimeout(restartTimer);
      await runner.stop().catch(() => {}); // already stopped on an error
      settled();
      return promise;
    },
  };
}
