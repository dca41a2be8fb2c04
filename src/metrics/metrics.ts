// The service's own metrics (GET /metrics, and the METRICS_PORT listener): what is counted as it
// happens (requests, long polls held, job failures) and what a scrape reads when it asks (the
// pools, the queue, agents, edge routes and certificates).
import type pg from 'pg';
import type { WorkerEvents } from 'graphile-worker';
import type { Clock } from '../clock.ts';
import { connectionsOf, type Database } from '../db/database.ts';
import type { HeldCount } from './held.ts';
import { Registry } from 'prom-client';
import { metricFamilies, processMetrics } from './families.ts';
import { poolGauges } from './pools.ts';
import { databaseCollectors } from './collectors.ts';

interface Deps {
  db: Database;
  clock: Clock;
  offlineAfterSeconds: number;
  /** The bound of each scrape-time read, in ms (collectors.ts). */
  boundMs?: number;
}

export function createMetrics({ db, clock, offlineAfterSeconds, boundMs }: Deps) {
  const families = metricFamilies();
  const { registry } = families;
  processMetrics();
  const pools = poolGauges(families);
  const connections = connectionsOf(db);
  if (connections) pools.watch('main', connections.pool);
  if (connections?.lanePool) pools.watch('read_lane', connections.lanePool);
  let onError: ((collector: string, err: unknown) => void) | undefined;
  const collect = databaseCollectors({
    db,
    clock,
    families,
    offlineAfterSeconds,
    boundMs,
    onError: (name, err) => onError?.(name, err),
  });
  const held = (kind: string): HeldCount => {
    const child = families.longPolls.labels(kind);
    child.set(0);
    return child;
  };

  return {
    families,
    /** Prometheus' text format, version 0.0.4. */
    contentType: registry.contentType,
    /** The agent sync's long polls and the event streams, counted where they are held. */
    held: { agentSync: held('agent_sync'), eventStream: held('event_stream') },
    /** Reports the use of another pool (main.ts: the job queue's). */
    watchPool: (name: string, pool: pg.Pool) => pools.watch(name, pool),
    /** Counts the failures graphile-worker reports on `events` (the worker's). */
    countJobFailures(events: WorkerEvents) {
      // The worker only takes the tasks of our task list: the label's values are its names.
      events.on('job:error', ({ job }) =>
        families.jobAttemptsFailed.inc({ task: job.task_identifier }),
      );
      events.on('job:failed', ({ job }) => families.jobsFailed.inc({ task: job.task_identifier }));
    },
    /** Where a failed scrape-time read is told (main.ts logs it). */
    onCollectorError(fn: (collector: string, err: unknown) => void) {
      onError = fn;
    },
    /** Every family, read now; a failed read drops its own families and says so. */
    async render(): Promise<string> {
      pools.sample();
      await collect();
      return Registry.merge([processMetrics(), registry]).metrics();
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
