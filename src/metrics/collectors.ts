// What a scrape reads from the database. Each collector is one bounded read; they run side by
// side, and one that fails or runs past its bound drops its own families from this scrape and
// says so (frameplane_metrics_collector_up 0, its errors counted): the rest of the scrape stands.
import { onlineSince } from '../agent-api/agents-service.ts';
import type { Clock } from '../clock.ts';
import type { Database } from '../db/database.ts';
import type { MetricFamilies } from './families.ts';
import {
  agentCounts,
  boundedRead,
  certificateCounts,
  queueCounts,
  routeCounts,
} from './metrics-dal.ts';

/** How long a scrape waits for one collector: well under Prometheus' default 10 s timeout. */
export const COLLECT_BOUND_MS = 2000;

interface Deps {
  db: Database;
  clock: Clock;
  families: MetricFamilies;
  /** AGENT_OFFLINE_AFTER_SECONDS: the rule agents-service.ts shows as `online`. */
  offlineAfterSeconds: number;
  boundMs?: number;
  /** Told of each failed read (main.ts logs it). */
  onError?: (collector: string, err: unknown) => void;
}

interface Collector {
  name: string;
  /** Drops what it set: a failed read reports nothing rather than the last read's counts. */
  clear(): void;
  /** Reads, and answers how to set its families: only a read within the bound sets them. */
  collect(db: Database, boundMs: number): Promise<() => void>;
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  work.catch(() => {}); // a read answered after the bound is not waited for
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function databaseCollectors({
  db,
  clock,
  families: f,
  offlineAfterSeconds,
  boundMs,
  onError,
}: Deps) {
  const collectors: Collector[] = [
    {
      name: 'agents',
      clear() {
        f.agents.reset();
        f.agentsOnline.reset();
      },
      async collect(db, ms) {
        const since = onlineSince(clock.now(), offlineAfterSeconds);
        const rows = await boundedRead(db, ms, (trx) => agentCounts(trx, since));
        return () => {
          for (const kind of ['cloud', 'self_hosted']) {
            const row = rows.find((r) => r.kind === kind);
            f.agents.set({ kind }, row?.registered ?? 0);
            f.agentsOnline.set({ kind }, row?.online ?? 0);
          }
        };
      },
    },
    {
      name: 'job_queue',
      clear: () => f.queueJobs.reset(),
      async collect(db, ms) {
        const counts = await boundedRead(db, ms, queueCounts);
        return () => {
          for (const state of ['ready', 'scheduled', 'locked', 'failed'] as const)
            f.queueJobs.set({ state }, counts[state]);
        };
      },
    },
    {
      name: 'edge_routes',
      clear: () => f.edgeRoutes.reset(),
      async collect(db, ms) {
        const counts = await boundedRead(db, ms, routeCounts);
        return () => {
          f.edgeRoutes.set({ kind: 'frame' }, counts.frames);
          f.edgeRoutes.set({ kind: 'domain' }, counts.domains);
        };
      },
    },
    {
      name: 'edge_certificates',
      clear() {
        f.certificates.reset();
        f.earliestExpiry.remove();
      },
      async collect(db, ms) {
        const now = clock.now();
        const c = await boundedRead(db, ms, (trx) => certificateCounts(trx, now));
        return () => {
          for (const state of ['valid', 'expired', 'pending', 'failing'] as const)
            f.certificates.set({ state }, c[state]);
          if (c.earliest) f.earliestExpiry.set(c.earliest.getTime() / 1000);
          else f.earliestExpiry.remove(); // absent, not 0: no alert on a time long past
        };
      },
    },
  ];

  const ms = boundMs ?? COLLECT_BOUND_MS;
  // Present from the start, at 0: a rate over them needs the series before the first error.
  for (const c of collectors) f.collectorErrors.inc({ collector: c.name }, 0);
  /** Runs every collector once; never throws. */
  return async function collect() {
    await Promise.all(
      collectors.map(async (c) => {
        try {
          const apply = await within(ms, c.collect(db, ms));
          apply();
          f.collectorUp.set({ collector: c.name }, 1);
        } catch (err) {
          onError?.(c.name, err);
          c.clear();
          f.collectorUp.set({ collector: c.name }, 0);
          f.collectorErrors.inc({ collector: c.name });
        }
      }),
    );
  };
}
