// The PostgreSQL pools' use, read from pg.Pool's own counters when a scrape asks: nothing is
// counted per statement. A pool is named by its role (main, read_lane, jobs), never its URL.
import type pg from 'pg';
import type { MetricFamilies } from './families.ts';

export function poolGauges(f: MetricFamilies) {
  const pools = new Map<string, pg.Pool>();
  return {
    watch(name: string, pool: pg.Pool) {
      pools.set(name, pool);
    },
    /** Sets the gauges to what each pool holds now. */
    sample() {
      for (const [pool, p] of pools) {
        f.poolConnections.set({ pool, state: 'idle' }, p.idleCount);
        f.poolConnections.set({ pool, state: 'in_use' }, p.totalCount - p.idleCount);
        f.poolWaiting.set({ pool }, p.waitingCount);
        f.poolMax.set({ pool }, p.options.max ?? 10);
      }
    },
  };
}
