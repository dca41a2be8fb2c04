// The agent's metrics (issue 39), its pure parts by tables: a replica's deltas between two
// samples, the latency histogram and status classes, Docker's stats and cgroup files read as
// usage, HAProxy's access lines, and the bounded queue of samples waiting for a sync. The
// readings of real containers and of the edges are in test/containers/metrics.test.ts and
// test/edge/request-metrics.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATENCY_BOUNDS_MS } from '../../src/agent-api/sync-items.ts';
import {
  mergeReplicaSamples,
  ReplicaDeltas,
  type Reading,
  type ReplicaMetric,
} from '../../src/runner/metrics/deltas.ts';
import {
  bucketOf,
  classOf,
  mergeRequestSamples,
  RequestMeter,
  type RequestMetric,
} from '../../src/runner/edge/request-meter.ts';
import { usageOfStats } from '../../src/runner/metrics/docker-stats.ts';
import { parseProcStat, processUsage } from '../../src/runner/metrics/process-usage.ts';
import {
  frameOfLine,
  lineSplitter,
  parseAccessLine,
} from '../../src/runner/edge/haproxy/access-log.ts';
import { MetricsQueue } from '../../src/runner/metrics/queue.ts';
import { EdgeLines, edgeLine, terminationDesc } from '../../src/runner/edge/edge-lines.ts';
import { Outbox } from '../../src/runner/client.ts';
import { splitBatch } from '../../src/runner/sync-split.ts';
import { checkReplicaMetric } from '../../src/runner/sync-check.ts';
import { at } from '../helpers/checked.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const reading = (id: string, cpu?: number, more: Partial<Reading['usage']> = {}, index = 0) => ({
  index,
  id,
  usage: cpu === undefined ? undefined : { cpuSeconds: cpu, ...more },
});
const none = new Map<number, number>();

describe('a replica between two samples', () => {
  it('primes on the first look at a frame, then sends what was used since', () => {
    const d = new ReplicaDeltas();
    const u = { memoryBytes: 100, memoryLimitBytes: 1000, netRxBytes: 50, netTxBytes: 5 };
    expect(d.sample('frm_a', [reading('c1', 10, u)], none, 0)).toEqual([]);
    const more = { memoryBytes: 300, memoryLimitBytes: 1000, netRxBytes: 80, netTxBytes: 25 };
    expect(d.sample('frm_a', [reading('c1', 12.5, more)], none, 10_000)).toEqual([
      {
        frame_id: 'frm_a',
        replica: 0,
        seconds: 10,
        cpu_seconds: 2.5,
        memory_bytes: 300,
        memory_limit_bytes: 1000,
        net_rx_bytes: 30,
        net_tx_bytes: 20,
        restarts: 0,
      },
    ]);
  });

  it.each<[string, Reading[][], Array<Partial<ReplicaMetric>[]>]>([
    [
      'an instance new since the last look counts from zero (it started within the interval)',
      [[], [reading('c1', 3)]],
      [[], [{ seconds: 10, cpu_seconds: 3 }]],
    ],
    [
      'a counter that went back counts as zero',
      [[reading('c1', 10)], [reading('c1', 4)], [reading('c1', 5)]],
      [[], [{ cpu_seconds: 0 }], [{ cpu_seconds: 1 }]],
    ],
    [
      'an instance not read this time is read against its last reading next time',
      [[reading('c1', 10)], [reading('c1')], [reading('c1', 16)]],
      [[], [], [{ seconds: 20, cpu_seconds: 6 }]],
    ],
    [
      'one listed but never read only primes when first read',
      [[], [reading('c1')], [reading('c1', 50)], [reading('c1', 51)]],
      [[], [], [], [{ cpu_seconds: 1 }]],
    ],
    [
      'two instances of one replica (a deployment rolling) add up',
      [
        [reading('old', 10, { memoryBytes: 100, memoryLimitBytes: 500 })],
        [
          reading('old', 11, { memoryBytes: 100, memoryLimitBytes: 500 }),
          reading('new', 2, { memoryBytes: 40, memoryLimitBytes: 500 }),
        ],
      ],
      [[], [{ cpu_seconds: 3, memory_bytes: 140, memory_limit_bytes: 1000 }]],
    ],
    [
      'an instance gone is forgotten: one of the same id later is new',
      [[reading('c1', 10)], [], [reading('c1', 1)]],
      [[], [], [{ cpu_seconds: 1 }]],
    ],
  ])('%s', (_name, looks, want) => {
    const d = new ReplicaDeltas();
    looks.forEach((readings, i) => {
      const got = d.sample('frm_a', readings, none, i * 10_000);
      expect(got).toHaveLength(want[i]?.length ?? 0);
      for (const [j, item] of got.entries()) expect(item).toMatchObject(want[i]?.[j] ?? {});
    });
  });

  it('sends the restarts made since its last sample once, with the next sample of it', () => {
    const d = new ReplicaDeltas();
    d.sample('frm_a', [reading('c1', 1, {}, 0), reading('d1', 1, {}, 1)], none, 0);
    // Replica 1 crashed and is down: its restart waits for a sample of it.
    const r1 = new Map([[1, 2]]);
    const second = d.sample('frm_a', [reading('c1', 2, {}, 0)], r1, 10_000);
    expect(second.map((m) => [m.replica, m.restarts])).toEqual([[0, 0]]);
    const third = d.sample(
      'frm_a',
      [reading('c1', 3, {}, 0), reading('d2', 0.5, {}, 1)],
      new Map([[1, 3]]),
      20_000,
    );
    expect(third.map((m) => [m.replica, m.restarts, m.cpu_seconds])).toEqual([
      [0, 0, 1],
      [1, 3, 0.5],
    ]);
    const fourth = d.sample(
      'frm_a',
      [reading('c1', 4, {}, 0), reading('d2', 1, {}, 1)],
      new Map([[1, 3]]),
      30_000,
    );
    expect(fourth.map((m) => m.restarts)).toEqual([0, 0]);
  });

  it('never covers more than an hour: a longer gap primes again', () => {
    const d = new ReplicaDeltas();
    d.sample('frm_a', [reading('c1', 1)], none, 0);
    expect(d.sample('frm_a', [reading('c1', 2)], none, 3_601_000)).toEqual([]);
    expect(d.sample('frm_a', [reading('c1', 3)], none, 3_611_000)).toHaveLength(1);
  });
});

describe('latency buckets and status classes', () => {
  it.each([
    [0, 0],
    [1, 0],
    [1.01, 1],
    [2, 1],
    [4.9, 2],
    [10, 3],
    [250, 8],
    [1000, 9],
    [30_000, 13],
    [30_001, 14],
    [1e9, 14],
  ])('%f ms goes to bucket %i', (ms, bucket) => {
    expect(bucketOf(ms)).toBe(bucket);
    if (bucket < LATENCY_BOUNDS_MS.length)
      expect(ms).toBeLessThanOrEqual(LATENCY_BOUNDS_MS[bucket] as number);
  });

  it.each([
    [101, '1xx'],
    [200, '2xx'],
    [308, '3xx'],
    [499, '4xx'],
    [503, '5xx'],
    [-1, undefined],
    [0, undefined],
    [600, undefined],
  ])('status %i is %s', (status, c) => {
    expect(classOf(status)).toBe(c);
  });

  it('counts per frame until taken, then starts over; 1xx has no latency', () => {
    const m = new RequestMeter();
    m.record('frm_a', 200, 3);
    m.record('frm_a', 404, 3);
    m.record('frm_a', 101, 60_000);
    m.record('frm_b', 503, 0.2);
    m.record('frm_b', -1, 5);
    const taken = m.take();
    expect(taken.get('frm_a')?.status).toEqual({
      '1xx': 1,
      '2xx': 1,
      '3xx': 0,
      '4xx': 1,
      '5xx': 0,
    });
    expect(taken.get('frm_a')?.latency[2]).toBe(2);
    expect(taken.get('frm_a')?.latency.reduce((a, b) => a + b)).toBe(2);
    expect(taken.get('frm_b')?.latency[0]).toBe(1);
    expect(m.take().size).toBe(0);
  });
});

describe("Docker's stats as usage", () => {
  const net = { eth0: { rx_bytes: 100, tx_bytes: 10 }, eth1: { rx_bytes: 5, tx_bytes: 1 } };
  it.each([
    [
      'cgroup v1: usage less total_inactive_file',
      {
        read: '2026-11-30T10:00:00Z',
        cpu_stats: { cpu_usage: { total_usage: 2_500_000_000 } },
        memory_stats: { usage: 1000, limit: 4000, stats: { total_inactive_file: 300, cache: 400 } },
        networks: net,
      },
      {
        cpuSeconds: 2.5,
        memoryBytes: 700,
        memoryLimitBytes: 4000,
        netRxBytes: 105,
        netTxBytes: 11,
      },
    ],
    [
      'cgroup v2: usage less inactive_file',
      {
        read: '2026-11-30T10:00:00Z',
        cpu_stats: { cpu_usage: { total_usage: 1e9 } },
        memory_stats: { usage: 1000, limit: 4000, stats: { inactive_file: 100 } },
      },
      { cpuSeconds: 1, memoryBytes: 900, memoryLimitBytes: 4000 },
    ],
    [
      'cgroup v1 without an inactive count: less the cache',
      {
        cpu_stats: { cpu_usage: { total_usage: 0 } },
        memory_stats: { usage: 1000, stats: { cache: 400 } },
      },
      { cpuSeconds: 0, memoryBytes: 600 },
    ],
  ])('%s', (_name, stats, usage) => {
    expect(usageOfStats(stats)).toEqual(usage);
  });

  it('a container not running has none', () => {
    expect(usageOfStats({ read: '0001-01-01T00:00:00Z', cpu_stats: { cpu_usage: {} } })).toBe(
      undefined,
    );
    expect(usageOfStats({ memory_stats: {} })).toBe(undefined);
  });
});

describe('a process replica read from cgroup files and /proc', () => {
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'frameplane-cgroup-'));
    cleanups.push(() => rmSync(d, { recursive: true, force: true }));
    return d;
  };

  it('parses a /proc stat line whose command holds spaces and parentheses', () => {
    const fields = 'S 1 4242 4242 0 -1 0 0 0 0 0 150 50 20 30 20 0 1 0 100 0 25';
    expect(parseProcStat(`4243 (my (odd) app) ${fields}`)).toEqual({
      pgrp: 4242,
      cpuSeconds: 2.5,
      rssBytes: 25 * 4096,
    });
  });

  it('cgroup v2: cpu.stat, memory.current less inactive files, memory.max', () => {
    const d = dir();
    writeFileSync(join(d, 'cpu.stat'), 'usage_usec 1500000\nuser_usec 1000000\n');
    writeFileSync(join(d, 'memory.current'), '5000\n');
    writeFileSync(join(d, 'memory.stat'), 'anon 4000\ninactive_file 1000\n');
    writeFileSync(join(d, 'memory.max'), '8000\n');
    expect(processUsage(process.pid, [d])).toEqual({
      cpuSeconds: 1.5,
      memoryBytes: 4000,
      memoryLimitBytes: 8000,
    });
    writeFileSync(join(d, 'memory.max'), 'max\n');
    expect(processUsage(process.pid, [d])).toEqual({ cpuSeconds: 1.5, memoryBytes: 4000 });
  });

  it('cgroup v1: the memory group, and the CPU of its processes from /proc', () => {
    const [mem, cpu] = [dir(), dir()];
    writeFileSync(join(mem, 'memory.usage_in_bytes'), '9000\n');
    writeFileSync(join(mem, 'memory.stat'), 'cache 3000\ntotal_inactive_file 2000\n');
    writeFileSync(join(mem, 'memory.limit_in_bytes'), '9223372036854771712\n');
    writeFileSync(join(mem, 'cgroup.procs'), `${process.pid}\n`);
    const u = processUsage(1, [mem, cpu]);
    expect(u).toMatchObject({ memoryBytes: 7000 });
    expect(u?.memoryLimitBytes).toBe(undefined);
    expect(u?.cpuSeconds).toBeGreaterThan(0); // this very process's
    writeFileSync(join(cpu, 'cpuacct.usage'), '3000000000\n');
    expect(processUsage(1, [mem, cpu])?.cpuSeconds).toBe(3);
  });

  it('without a group: the CPU and resident memory of its process group', () => {
    const u = processUsage(process.pid);
    // This test's worker may not lead its group: then nothing is read, as for a replica gone.
    if (u) expect(u.memoryBytes).toBeGreaterThan(0);
    expect(processUsage(2 ** 22 + 12_345)).toBe(undefined);
  });
});

describe("HAProxy's access lines", () => {
  const line = (backend: string, status: number, ms: number | string, host = 'a.test') =>
    `fp1 ${backend} ${status} ${ms} -- GET /x ${host}`;
  it.each([
    [
      'fp1 slot_3 200 12 -- GET /a/b web.example.test',
      { backend: 'slot_3', status: 200, ms: 12, host: 'web.example.test' },
    ],
    [
      'fp1 page_starting 503 0 -- POST / a.test',
      { backend: 'page_starting', status: 503, ms: 0, method: 'POST', path: '/' },
    ],
    [
      'fp1 slot_1 502 3 SH GET /api a.test',
      { status: 502, ended: 'SH', method: 'GET', path: '/api', host: 'a.test' },
    ],
    ['fp1 http 400 -1 PR <BADREQ> <BADREQ> -', { backend: 'http', status: 400, ms: Number.NaN }],
    ['fp1 slot_0 -1 5 CD GET / odd host', { backend: 'slot_0', status: -1, host: 'odd host' }],
    ['[WARNING] (1) : Server slot_0/r1 is DOWN', undefined],
    ['Proxy http started.', undefined],
    ['fp1 short', undefined],
  ])('%s', (text, want) => {
    const got = parseAccessLine(text);
    if (want === undefined) expect(got).toBe(undefined);
    else expect(got).toMatchObject(want);
  });

  it('has no host when HAProxy set none', () => {
    expect(parseAccessLine('fp1 http 400 -1 PR GET / -')?.host).toBe(undefined);
  });

  const slots = (s: number) => (s === 3 ? 'frm_slot' : undefined);
  const hosts = (h: string) => (h === 'a.test' ? 'frm_host' : undefined);
  it.each([
    ['a slot: its frame', line('slot_3', 200, 1, 'zzz'), 'frm_slot'],
    ['a slot no frame holds', line('slot_4', 200, 1), undefined],
    ["a page: the host's frame", line('page_stopped', 503, 0), 'frm_host'],
    ['the unknown host page', line('page_unknown_host', 404, 0, 'b.test'), undefined],
    [
      'the unknown host page, the map behind the table',
      line('page_unknown_host', 404, 0),
      undefined,
    ],
    ['a body refused by the frontend', line('http', 413, 0), 'frm_host'],
    ['the redirect to HTTPS: not the frame’s', line('http', 308, 0), undefined],
    ['an ACME challenge: not the frame’s', line('acme', 200, 3), undefined],
  ])('%s', (_name, text, frame) => {
    const l = parseAccessLine(text);
    expect(l && frameOfLine(l, slots, hosts)).toBe(frame);
  });

  it('splits chunks into lines, a partial one waiting for its end', () => {
    const lines: string[] = [];
    const feed = lineSplitter((l) => lines.push(l));
    feed('fp1 a 200 1 x\nfp1 b');
    feed(' 201 2 y\n\n');
    expect(lines).toEqual(['fp1 a 200 1 x', 'fp1 b 201 2 y', '']);
  });
});

const sample = (replica: number, more: Partial<ReplicaMetric> = {}): ReplicaMetric => ({
  frame_id: 'frm_a',
  replica,
  seconds: 10,
  cpu_seconds: 1,
  memory_bytes: 100,
  ...more,
});
const requests = (n: number, seconds = 10): RequestMetric => ({
  frame_id: 'frm_a',
  seconds,
  status: { '1xx': 0, '2xx': n, '3xx': 0, '4xx': 0, '5xx': 0 },
  latency: LATENCY_BOUNDS_MS.map(() => 0).concat([n]),
});

describe('samples waiting for a sync', () => {
  it('merges samples while none is sent: counts add up, memory keeps the larger', () => {
    expect(mergeReplicaSamples(sample(0, { memory_bytes: 300, restarts: 1 }), sample(0))).toEqual({
      ...sample(0),
      seconds: 20,
      cpu_seconds: 2,
      memory_bytes: 300,
      restarts: 1,
    });
    expect(mergeReplicaSamples(sample(0, { seconds: 3595 }), sample(0))).toBe(undefined);
    expect(mergeRequestSamples(requests(2), requests(3))).toEqual({ ...requests(5), seconds: 20 });
  });

  it('holds one sample per replica and frame however long the service is away', () => {
    const q = new MetricsQueue();
    for (let i = 0; i < 1000; i++) {
      q.replica(sample(0));
      q.replica(sample(1));
      q.request(requests(1));
    }
    expect(q.size).toBe(3);
    const { metrics } = q.take(64 * 1024);
    // At most an hour together: 360 samples of 10 s; the 361st started over (10,000 s % 3600).
    expect(metrics?.replicas?.map((m) => m.seconds)).toEqual([2800, 2800]);
    expect(at(metrics?.requests ?? [], 0).status['2xx']).toBe(280);
  });

  it('never merges into a sample offered to a sync whose fate is unknown', () => {
    const q = new MetricsQueue();
    q.replica(sample(0, { cpu_seconds: 1 }));
    const first = q.take(64 * 1024).metrics;
    q.replica(sample(0, { cpu_seconds: 2 })); // while the first is on its way
    q.ack(first); // taken: the second alone is left
    expect(q.take(64 * 1024).metrics?.replicas).toEqual([sample(0, { cpu_seconds: 2 })]);

    const q2 = new MetricsQueue();
    q2.replica(sample(0, { cpu_seconds: 1 }));
    q2.take(64 * 1024); // that sync failed: never acknowledged
    q2.replica(sample(0, { cpu_seconds: 2 }));
    expect(q2.take(64 * 1024).metrics?.replicas).toEqual([
      sample(0, { seconds: 20, cpu_seconds: 3 }),
    ]);
  });

  it('go in the sync body, checked alone, and are split with their frame', () => {
    const outbox = new Outbox();
    outbox.metrics({
      replicas: [sample(0), sample(1, { cpu_seconds: Number.NaN })],
      requests: [requests(4)],
    });
    const b = outbox.batch();
    expect(b.metrics).toEqual({ replicas: [sample(0)], requests: [requests(4)] });
    expect(splitBatch({ ...b, events: [], logs: [] })).toHaveLength(2);
    outbox.ack(b);
    expect(outbox.pending).toBe(false);
  });

  it('a reading the runtime got wrong is left out, the sample kept', () => {
    const c = checkReplicaMetric(sample(0, { memory_bytes: -5, net_rx_bytes: 10.4 }));
    expect(c).toEqual({
      item: { ...sample(0, { net_rx_bytes: 10 }), memory_bytes: undefined },
      repaired: expect.any(String),
    });
  });
});

describe("the edge's own lines in a frame's log", () => {
  it('say status, why, method, path and time, as Heroku’s router does', () => {
    const f = { status: 502, desc: 'the replica refused the connection', method: 'POST', ms: 3.4 };
    expect(edgeLine({ ...f, path: '/a "b"' })).toBe(
      'at=error status=502 desc="the replica refused the connection" method=POST ' +
        'path="/a \\"b\\"" service=3ms',
    );
    expect(edgeLine({ ...f, path: `/${'x'.repeat(500)}`, ms: Number.NaN })).toMatch(
      /path="\/x{199}…" service=-$/,
    );
  });

  it.each([
    ['--', undefined],
    ['CD', undefined], // the client went away: not the edge's failure
    ['SC', 'the replica refused the connection'],
    ['sC', 'connecting to the replica timed out'],
    ['sH', 'the replica did not answer in time'],
    ['SH', 'the replica closed the connection'],
    ['PH', 'the edge could not pass the answer on (PH)'],
  ])("HAProxy's termination state %s: %s", (ended, desc) => {
    expect(terminationDesc(ended)).toBe(desc);
  });

  it('are at most 30 a minute per frame, then one says how many more', () => {
    const sent: Array<[string, string]> = [];
    let now = 0;
    const lines = new EdgeLines(
      (f, l) => sent.push([f, l]),
      () => now,
    );
    const f = { status: 503, desc: 'the frame is stopped', method: 'GET', path: '/', ms: 0 };
    for (let i = 0; i < 100; i++) lines.failed('frm_a', f);
    lines.failed('frm_b', f);
    expect(sent.filter(([id]) => id === 'frm_a')).toHaveLength(30);
    now = 60_000;
    lines.failed('frm_a', f);
    expect(sent.slice(-2)).toEqual([
      ['frm_a', 'at=info desc="70 more edge errors in the last minute"'],
      ['frm_a', edgeLine(f)],
    ]);
  });
});
