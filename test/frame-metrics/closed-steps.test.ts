// The remembered steps of a frame's metrics (closed-steps.ts): whatever the order of samples,
// clock moves and queries, an answer made with remembered steps is the answer made without
// any (MEMO=off), and a query reads only the steps that may still change.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CLOSED_AFTER_MS,
  createClosedSteps,
  type Sums,
} from '../../src/frame-metrics/closed-steps.ts';
import { buildPoints } from './points.ts';
import type { ReplicaSums, RequestSums } from '../../src/frame-metrics/metrics-points.ts';
import {
  bucketStart,
  isRangeError,
  metricsRange,
  RESOLUTIONS,
  type Range,
} from '../../src/frame-metrics/metrics-range.ts';
import { createMemos } from '../../src/memo.ts';

const T0 = Date.parse('2030-03-01T10:00:07Z');

/** The stored rows, as the ingest keeps them: each sample added to the bucket of its arrival. */
function store() {
  const usage = new Map<string, ReplicaSums & { resolution: number }>();
  const requests = new Map<string, RequestSums & { resolution: number }>();
  return {
    add(now: number, s: { replica: number; cpu: number; memory: number; count: number }) {
      for (const resolution of RESOLUTIONS) {
        const at = bucketStart(new Date(now), resolution).getTime();
        const u = usage.get(`${resolution}/${at}/${s.replica}`);
        usage.set(`${resolution}/${at}/${s.replica}`, {
          resolution,
          at,
          replica: s.replica,
          seconds: (u?.seconds ?? 0) + 10,
          cpu_seconds: (u?.cpu_seconds ?? 0) + s.cpu,
          memory_max_bytes: Math.max(u?.memory_max_bytes ?? 0, s.memory),
          memory_limit_bytes: 1000,
          net_rx_bytes: null,
          net_tx_bytes: (u?.net_tx_bytes ?? 0) + s.count,
          restarts: u?.restarts ?? 0,
        });
        const r = requests.get(`${resolution}/${at}`);
        const latency = r?.latency ?? Array.from({ length: 15 }, () => 0);
        latency[s.replica * 4] = (latency[s.replica * 4] ?? 0) + s.count;
        const status = r?.status ?? [0, 0, 0, 0, 0];
        status[1] += s.count;
        requests.set(`${resolution}/${at}`, { resolution, at, status, latency });
      }
    },
    /** The rows of `range`'s resolution in it, as the query's statement reads them. */
    async read(range: Range): Promise<Sums> {
      const inRange = (r: { resolution: number; at: number }) =>
        r.resolution === range.resolution &&
        r.at >= range.since.getTime() &&
        r.at < range.until.getTime();
      const copy = <T>(rows: Iterable<T>) => structuredClone([...rows]);
      return {
        usage: copy(usage.values()).filter(inRange),
        requests: copy(requests.values()).filter(inRange),
      };
    },
  };
}

const head = (r: Range) => ({ frame_id: 'frm_1', since: r.since.toISOString(), step: r.step });

const command = fc.oneof(
  fc.record({ advance: fc.integer({ min: 1, max: 1200 }) }),
  fc.record({
    replica: fc.integer({ min: 0, max: 2 }),
    cpu: fc.integer({ min: 0, max: 20 }),
    memory: fc.integer({ min: 0, max: 900 }),
    count: fc.integer({ min: 0, max: 50 }),
    // A sync dates its samples when it starts and commits them some time after.
    lag: fc.integer({ min: 0, max: CLOSED_AFTER_MS / 1000 - 1 }),
  }),
  fc.record({
    minutes: fc.integer({ min: 1, max: 24 * 60 }),
    step: fc.constantFrom(undefined, 60, 300, 900, 3600),
  }),
);

describe('remembered steps of frame metrics', () => {
  it('answer as if nothing were remembered, whatever samples, clock moves and queries', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 40 }), async (commands) => {
        const rows = store();
        const on = createClosedSteps(createMemos(true));
        const off = createClosedSteps(createMemos(false));
        let now = T0;
        for (const c of commands) {
          if ('advance' in c) now += c.advance * 1000;
          else if ('replica' in c) rows.add(now - c.lag * 1000, c);
          else {
            const since = new Date(now - c.minutes * 60_000).toISOString();
            const range = metricsRange({ since, step: c.step }, new Date(now), 24);
            if (isRangeError(range)) continue;
            const at = new Date(now);
            const fresh = await off.text('frm_1', range, head(range), at, rows.read);
            const kept = await on.text('frm_1', range, head(range), at, rows.read);
            expect(kept).toBe(fresh);
            const all = await rows.read(range);
            const built = buildPoints(range, all.usage, all.requests);
            expect(JSON.parse(fresh ?? '')).toEqual({ ...head(range), ...built });
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reads only the steps that may still change, and never answers for a frame not found', async () => {
    const rows = store();
    for (let s = 0; s < 3600; s += 10)
      rows.add(T0 - 3_600_000 + s * 1000, { replica: 0, cpu: 1, memory: 5, count: 2 });
    const steps = createClosedSteps(createMemos(true));
    const now = new Date(T0);
    const range = metricsRange({ since: new Date(T0 - 3_600_000).toISOString() }, now, 24);
    if (isRangeError(range)) throw new Error(range.message);
    const asked: string[] = [];
    const read = (r: Range) => {
      asked.push(r.since.toISOString());
      return rows.read(r);
    };
    const first = await steps.text('frm_1', range, head(range), now, read);
    const again = await steps.text('frm_1', range, head(range), now, read);
    expect(again).toBe(first);
    // The second read starts at the first step that had not closed CLOSED_AFTER_MS ago.
    const open = Math.floor((T0 - CLOSED_AFTER_MS) / 60_000) * 60_000;
    expect(asked).toEqual([range.since.toISOString(), new Date(open).toISOString()]);
    expect(JSON.parse(again ?? '').points).toHaveLength(61);
    // Remembered steps or not, the database says whether the frame is there.
    expect(await steps.text('frm_1', range, head(range), now, async () => undefined)).toBe(
      undefined,
    );
  });
});
