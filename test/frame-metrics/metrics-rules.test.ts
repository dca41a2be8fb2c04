// The pure rules of frame metrics (no database): which range and step a query answers, the
// percentiles read from a latency histogram, the points built from stored sums, and a sync's
// samples added up before they are stored. Tables of cases, then properties (fast-check).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LATENCY_BOUNDS_MS } from '../../src/agent-api/sync-items.ts';
import {
  bucketStart,
  defaultStep,
  isRangeError,
  MAX_POINTS,
  metricsRange,
} from '../../src/frame-metrics/metrics-range.ts';
import { percentiles, quantile, type ReplicaSums } from '../../src/frame-metrics/metrics-points.ts';
import { replicaRows, requestRows } from '../../src/frame-metrics/metrics-ingest.ts';
import { buildPoints } from './points.ts';

const NOW = new Date('2030-01-02T12:34:56.789Z');
const iso = (d: Date) => d.toISOString();
const ago = (s: number) => new Date(NOW.getTime() - s * 1000).toISOString();
const hist = (counts: Record<number, number>) =>
  Array.from({ length: LATENCY_BOUNDS_MS.length + 1 }, (_, i) => counts[i] ?? 0);

describe('metricsRange', () => {
  const cases: Array<[string, { since?: string; until?: string; step?: number }, unknown]> = [
    [
      'nothing asked: the last hour by minutes, the current minute last',
      {},
      { since: '2030-01-02T11:34:00.000Z', until: '2030-01-02T12:35:00.000Z', step: 60 },
    ],
    [
      '6 h: 360 minutes fit',
      { since: '2030-01-02T06:00:00Z', until: '2030-01-02T12:00:00Z' },
      { step: 60, resolution: 60 },
    ],
    [
      '24 h: by 5 minutes, from five-minute rows',
      { since: ago(86400 - 60) },
      { step: 300, resolution: 300 },
    ],
    ['3 days: hours, from hour rows', { since: ago(3 * 86400) }, { step: 3600, resolution: 3600 }],
    ['30 days: 6 hours', { since: ago(30 * 86400) }, { step: 21600, resolution: 3600 }],
    [
      'a minute past the retention still reads minutes (the grace)',
      { since: ago(86400 + 60), step: 900 },
      { step: 900, resolution: 300 },
    ],
    [
      'a step aligns both ends to its multiples since the epoch',
      { since: '2030-01-02T10:07:00Z', until: '2030-01-02T11:01:00Z', step: 900 },
      { since: '2030-01-02T10:00:00.000Z', until: '2030-01-02T11:15:00.000Z', step: 900 },
    ],
    [
      'until before since',
      { since: '2030-01-02T11:00:00Z', until: '2030-01-02T10:00:00Z' },
      { path: 'since', code: 'invalid_range' },
    ],
    ['since = until', { since: iso(NOW), until: iso(NOW) }, { code: 'invalid_range' }],
    ['minutes of an old range', { since: ago(2 * 86400), step: 300 }, { code: 'step_too_fine' }],
    [
      '1,501 points',
      { since: '2030-01-02T00:00:00Z', until: '2030-01-03T01:01:00Z', step: 60 },
      { path: 'step', code: 'too_many_points' },
    ],
    [
      'an odd step of minutes: minute rows',
      { since: ago(3600), step: 420 },
      { step: 420, resolution: 60 },
    ],
    ['hours of a recent range: hour rows', { since: ago(3600), step: 7200 }, { resolution: 3600 }],
    [
      '1,500 points',
      { since: '2030-01-02T00:00:00Z', until: '2030-01-03T01:00:00Z', step: 60 },
      { step: 60 },
    ],
  ];
  it.each(cases)('%s', (_, asked, expected) => {
    const r = metricsRange(asked, NOW, 24);
    const shown = isRangeError(r)
      ? r
      : { since: iso(r.since), until: iso(r.until), step: r.step, resolution: r.resolution };
    expect(shown).toMatchObject(expected as object);
  });

  it('answers at most MAX_POINTS whole steps covering what was asked, or says why not', () => {
    const t0 = Date.parse('2029-12-01T00:00:00Z');
    const time = fc.integer({ min: t0, max: NOW.getTime() + 86400_000 });
    fc.assert(
      fc.property(
        time,
        time,
        fc.option(fc.integer({ min: 1, max: 1440 }).map((n) => n * 60)),
        (a, b, step) => {
          const asked = { since: new Date(a).toISOString(), until: new Date(b).toISOString() };
          const r = metricsRange({ ...asked, ...(step ? { step } : {}) }, NOW, 24);
          if (isRangeError(r)) {
            if (a >= b) expect(r.code).toBe('invalid_range');
            return;
          }
          expect(a < b).toBe(true);
          const points = (r.until.getTime() - r.since.getTime()) / (r.step * 1000);
          expect(Number.isInteger(points) && points >= 1 && points <= MAX_POINTS).toBe(true);
          expect(r.since.getTime() <= a && r.until.getTime() >= b).toBe(true);
          expect(r.since.getTime() % (r.step * 1000)).toBe(0);
          expect(r.step % r.resolution).toBe(0);
          if (!step) expect(points).toBeLessThanOrEqual(361); // 360 steps, plus one of alignment
        },
      ),
    );
  });

  it('picks the smallest default step that keeps to 360 points', () => {
    expect([3600, 21600, 86400, 7 * 86400, 80 * 86400].map((s) => defaultStep(s, 60))).toEqual([
      60, 60, 300, 3600, 21600,
    ]);
    expect(defaultStep(3600, 3600)).toBe(3600);
    expect(defaultStep(400 * 86400, 60)).toBe(21600); // none fits: the largest
  });

  it('puts a time in the minute and the hour it falls in', () => {
    expect(iso(bucketStart(NOW, 60))).toBe('2030-01-02T12:34:00.000Z');
    expect(iso(bucketStart(NOW, 3600))).toBe('2030-01-02T12:00:00.000Z');
  });
});

describe('latency percentiles', () => {
  const cases: Array<[string, number[], unknown]> = [
    ['no requests', hist({}), null],
    ['all in the first bucket, from 0 ms', hist({ 0: 100 }), { p50: 0.5, p95: 0.95, p99: 0.99 }],
    ['all in (10, 20]', hist({ 4: 10 }), { p50: 15, p95: 19.5, p99: 19.9 }],
    [
      'half fast, half slow',
      hist({ 1: 50, 9: 50 }),
      { p50: 2, p95: 500 + 500 * 0.9, p99: 500 + 500 * 0.98 }, // bucket 9 is (500, 1000]
    ],
    [
      'the open bucket answers its lower bound',
      hist({ 14: 3 }),
      { p50: 30000, p95: 30000, p99: 30000 },
    ],
    ['one request', hist({ 6: 1 }), { p50: 75, p95: 97.5, p99: 99.5 }],
  ];
  it.each(cases)('%s', (_, h, expected) => {
    expect(percentiles(h)).toEqual(expected);
  });

  it('is ordered, inside the bucket holding the rank, and ignores the scale of the counts', () => {
    const h = fc.array(fc.nat({ max: 1_000_000 }), { minLength: 15, maxLength: 15 });
    fc.assert(
      fc.property(h, fc.integer({ min: 2, max: 1000 }), (counts, k) => {
        const p = percentiles(counts);
        if (counts.every((c) => c === 0)) return expect(p).toBeNull();
        if (!p) throw new Error('percentiles of requests');
        expect(p.p50 <= p.p95 && p.p95 <= p.p99).toBe(true);
        expect(p.p50 >= 0 && p.p99 <= 30000).toBe(true);
        // Scaled counts give the same reading up to the last rounded digit (0.001 ms): the
        // interpolation's floating point may land either side of a half.
        const scaled = percentiles(counts.map((c) => c * k));
        for (const q of ['p50', 'p95', 'p99'] as const)
          expect(Math.abs((scaled?.[q] ?? -1) - p[q])).toBeLessThanOrEqual(0.0011);
        // The one-walk reading agrees with quantile's, rank by rank.
        const r3 = (x: number | null) => Math.round((x ?? -1) * 1000) / 1000;
        expect(p).toEqual({
          p50: r3(quantile(counts, 0.5)),
          p95: r3(quantile(counts, 0.95)),
          p99: r3(quantile(counts, 0.99)),
        });
        // The rank's bucket: as many requests below its lower bound as fewer than the rank.
        const q95 = quantile(counts, 0.95) ?? 0;
        const bounds = [0, ...LATENCY_BOUNDS_MS];
        const i = bounds.findLastIndex((b) => b <= q95);
        const total = counts.reduce((a, b) => a + b, 0);
        const below = counts.slice(0, Math.max(0, i)).reduce((a, b) => a + b, 0);
        expect(below).toBeLessThanOrEqual(0.95 * total);
      }),
    );
  });
});

describe('buildPoints', () => {
  const range = {
    since: new Date('2030-01-02T12:00:00Z'),
    until: new Date('2030-01-02T12:03:00Z'),
    step: 60,
    resolution: 60,
  };
  const sums = (over: Partial<ReplicaSums>): ReplicaSums => ({
    replica: 0,
    at: range.since.getTime(),
    seconds: 60,
    cpu_seconds: 30,
    memory_max_bytes: 10,
    memory_limit_bytes: null,
    net_rx_bytes: null,
    net_tx_bytes: 600,
    restarts: 0,
    ...over,
  });

  it('sums replicas, keeps nulls where nothing was sent, and skips rows outside the range', () => {
    const { points, replicas } = buildPoints(
      range,
      [
        sums({}),
        sums({ replica: 2, seconds: 30, cpu_seconds: 3, net_tx_bytes: null, restarts: 2 }),
        sums({ at: Date.parse('2030-01-02T12:02:00Z'), memory_max_bytes: null }),
        sums({ at: Date.parse('2030-01-02T12:03:00Z') }),
      ],
      [{ at: range.since.getTime(), status: [1, 2, 3, 4, 5], latency: hist({ 0: 15 }) }],
    );
    expect(points.map((p) => [p.cpu_cores, p.memory_bytes, p.net_tx_bytes_per_second])).toEqual([
      [0.6, 20, 10],
      [null, null, null],
      [0.5, null, 10],
    ]);
    expect(points[0]).toMatchObject({ restarts: 2, requests: 15, net_rx_bytes_per_second: null });
    expect(points[1]).toMatchObject({ restarts: 0, requests: 0, latency_ms: null });
    expect(points.map((p) => p.at)).toEqual([
      '2030-01-02T12:00:00.000Z',
      '2030-01-02T12:01:00.000Z',
      '2030-01-02T12:02:00.000Z',
    ]);
    expect(replicas.map((r) => [r.replica, r.points.map((p) => p.cpu_cores)])).toEqual([
      [0, [0.5, null, 0.5]],
      [2, [0.1, null, null]],
    ]);
  });
});

describe('a sync adds its samples up before storing them', () => {
  it('per replica: sums, the highest memory, nulls only where no sample said', () => {
    const s = { frame_id: 'frm_a', replica: 0, seconds: 10, cpu_seconds: 1 };
    expect(
      replicaRows([
        { ...s, memory_bytes: 5, net_rx_bytes: 7 },
        { ...s, memory_bytes: 9, restarts: 1 },
        { ...s, replica: 1, memory_limit_bytes: 100 },
      ]),
    ).toEqual([
      {
        ...s,
        samples: 2,
        seconds: 20,
        cpu_seconds: 2,
        memory_max_bytes: 9,
        memory_limit_bytes: null,
        net_rx_bytes: 7,
        net_tx_bytes: null,
        restarts: 1,
      },
      {
        ...s,
        replica: 1,
        samples: 1,
        memory_max_bytes: null,
        memory_limit_bytes: 100,
        net_rx_bytes: null,
        net_tx_bytes: null,
        restarts: 0,
      },
    ]);
  });

  it('per frame: status classes and histograms add up, in any order', () => {
    const sample = fc.record({
      frame_id: fc.constantFrom('frm_a', 'frm_b'),
      seconds: fc.integer({ min: 1, max: 60 }),
      status: fc.record({
        '1xx': fc.nat(9),
        '2xx': fc.nat(9),
        '3xx': fc.nat(9),
        '4xx': fc.nat(9),
        '5xx': fc.nat(9),
      }),
      latency: fc.array(fc.nat(9), { minLength: 15, maxLength: 15 }),
    });
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 20 }), (samples) => {
        const rows = requestRows(samples);
        const byFrame = (id: string) => rows.find((r) => r.frame_id === id);
        expect(requestRows([...samples].reverse()).map((r) => byFrame(r.frame_id))).toEqual(
          requestRows([...samples].reverse()),
        );
        for (const r of rows) {
          const mine = samples.filter((s) => s.frame_id === r.frame_id);
          expect(r.samples).toBe(mine.length);
          const total = (f: (s: (typeof samples)[number]) => number) =>
            mine.reduce((a, s) => a + f(s), 0);
          expect(r.status.reduce((a, b) => a + b, 0)).toBe(
            total((s) => Object.values(s.status).reduce((a, b) => a + b, 0)),
          );
          expect(r.latency.reduce((a, b) => a + b, 0)).toBe(
            total((s) => s.latency.reduce((a, b) => a + b, 0)),
          );
        }
      }),
    );
  });
});
