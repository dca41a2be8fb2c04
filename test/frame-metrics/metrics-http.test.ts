// Frame metrics end to end (issue 39): an agent sends samples in its sync, a viewer reads the
// points over HTTP; buckets follow the service clock, and the sweeper prunes by it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/factories.ts';
import { ADMIN, cloudAgent, frameWithReaders, sync } from '../helpers/frames.ts';

let t: TestApp;
let w: Awaited<ReturnType<typeof frameWithReaders>>;
/** The start of the minute the samples were sent in. */
let minute: Date;

const hist = (counts: Record<number, number>) =>
  Array.from({ length: 15 }, (_, i) => counts[i] ?? 0);
const status = (s2: number, s5 = 0) => ({ '1xx': 0, '2xx': s2, '3xx': 0, '4xx': 0, '5xx': s5 });

/** Moves the service clock to one second past the next minute, so a test's syncs share it. */
async function toMinuteStart() {
  const now = t.clock.now().getTime();
  const next = Math.ceil(now / 60_000) * 60_000 + 1000;
  await advance((next - now) / 1000);
  return new Date(next - 1000);
}

async function advance(seconds: number) {
  const r = await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } });
  expect(r.status, r.text).toBe(200);
}

const metrics = (query: string, token = w.viewer.token) =>
  t.get(`${w.path}/metrics${query}`, { token });

beforeAll(async () => {
  t = await testApp();
  w = await frameWithReaders(t, 'metrics-1');
  minute = await toMinuteStart();
  const id = w.frame.id;
  await sync(t, w.agent.token, {
    metrics: {
      replicas: [
        { frame_id: id, replica: 0, seconds: 10, cpu_seconds: 1, memory_bytes: 100 },
        { frame_id: id, replica: 0, seconds: 10, cpu_seconds: 3, memory_bytes: 300 },
        {
          frame_id: id,
          replica: 1,
          seconds: 20,
          cpu_seconds: 5,
          memory_bytes: 50,
          memory_limit_bytes: 1000,
          net_rx_bytes: 400,
          net_tx_bytes: 200,
          restarts: 1,
        },
      ],
      // 100 requests: 50 under 1 ms, 40 in (5, 10] ms, 10 in (100, 200] ms.
      requests: [{ frame_id: id, seconds: 10, status: status(90, 10), latency: hist({ 0: 50 }) }],
    },
  });
  await sync(t, w.agent.token, {
    metrics: {
      replicas: [{ frame_id: id, replica: 1, seconds: 20, cpu_seconds: 3, memory_bytes: 70 }],
      requests: [{ frame_id: id, seconds: 10, status: status(0), latency: hist({ 3: 40, 7: 10 }) }],
    },
  });
  // Another agent reporting this frame stores nothing for it.
  const other = await cloudAgent(t, 'metrics-2');
  await sync(t, other.token, {
    metrics: {
      replicas: [{ frame_id: id, replica: 0, seconds: 10, cpu_seconds: 100 }],
      requests: [{ frame_id: id, seconds: 10, status: status(1000), latency: hist({ 0: 1000 }) }],
    },
  });
});
afterAll(async () => {
  await t?.close();
});

describe('GET …/frames/:frame_id/metrics', () => {
  it('answers the sums of the minute the samples came in, by the service clock', async () => {
    const since = minute.toISOString();
    const until = new Date(minute.getTime() + 120_000).toISOString();
    const r = await metrics(`?since=${since}&until=${until}&step=60`);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ frame_id: w.frame.id, since, until, step: 60 });
    const [first, second] = r.json.points;
    expect(r.json.points).toHaveLength(2);
    expect(first).toEqual({
      at: since,
      cpu_cores: 4 / 20 + 8 / 40, // each replica's CPU seconds over its seconds, summed
      memory_bytes: 300 + 70, // each replica's highest, summed
      memory_limit_bytes: 1000,
      net_rx_bytes_per_second: 10,
      net_tx_bytes_per_second: 5,
      restarts: 1,
      requests: 100,
      status: status(90, 10),
      // ranks 50, 95 and 99 of 100: the top of bucket 0, then inside (5, 10] and (100, 200].
      latency_ms: { p50: 1, p95: 150, p99: 190 },
    });
    expect(second).toEqual({
      at: new Date(minute.getTime() + 60_000).toISOString(),
      cpu_cores: null,
      memory_bytes: null,
      memory_limit_bytes: null,
      net_rx_bytes_per_second: null,
      net_tx_bytes_per_second: null,
      restarts: 0,
      requests: 0,
      status: status(0),
      latency_ms: null,
    });
    expect(r.json.replicas).toEqual([
      {
        replica: 0,
        points: [
          { at: since, cpu_cores: 0.2, memory_bytes: 300, memory_limit_bytes: null },
          { at: second.at, cpu_cores: null, memory_bytes: null, memory_limit_bytes: null },
        ],
      },
      {
        replica: 1,
        points: [
          { at: since, cpu_cores: 0.2, memory_bytes: 70, memory_limit_bytes: 1000 },
          { at: second.at, cpu_cores: null, memory_bytes: null, memory_limit_bytes: null },
        ],
      },
    ]);
  });

  it('defaults to the last hour by minutes, aligned to the step', async () => {
    const r = await metrics('');
    expect(r.status, r.text).toBe(200);
    expect(r.json.step).toBe(60);
    expect(r.json.points).toHaveLength(61); // now is inside a minute: the last is partial
    expect(r.json.points.at(-1).at).toBe(minute.toISOString());
    expect(r.json.points.at(-1).requests).toBe(100);
  });

  it('picks a coarser step for a longer range, summing the minutes', async () => {
    const five = Math.floor(minute.getTime() / 300_000) * 300_000;
    const since = new Date(five - 23 * 3600_000).toISOString();
    const until = new Date(five + 3600_000).toISOString();
    const r = await metrics(`?since=${since}&until=${until}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json.step).toBe(300);
    expect(r.json.points).toHaveLength(288);
    expect(r.json.points[23 * 12]).toMatchObject({
      at: new Date(five).toISOString(),
      requests: 100,
      memory_bytes: 370,
    });
  });

  it('is 404 to a stranger, and to anyone for another frame; 401 without a token', async () => {
    expectProblem(await metrics('', w.outsider.token), 404, 'project_not_found');
    expectProblem(await t.get(`${w.path}/metrics`), 401, 'unauthorized');
    const other = w.path.replace(w.frame.id, 'frm_01JNQ7R1S2T3V4W5X6Y7Z8A9BC');
    expectProblem(await t.get(`${other}/metrics`, { token: w.ann.token }), 404);
  });

  it('refuses a malformed time, a reversed range, an odd step and too many points', async () => {
    expectProblem(await metrics('?since=yesterday'), 422, 'validation_failed');
    expectProblem(await metrics('?until=2026-13-01T00:00:00Z'), 422, 'validation_failed');
    const at = minute.toISOString();
    expectProblem(await metrics(`?since=${at}&until=${at}`), 422, 'invalid_range');
    expectProblem(await metrics('?step=90'), 422, 'validation_failed');
    expectProblem(await metrics('?step=0'), 422, 'validation_failed');
    const later = new Date(minute.getTime() + 26 * 3600_000).toISOString();
    const r = await metrics(`?since=${at}&until=${later}&step=60`);
    expectProblem(r, 422, 'too_many_points');
    expect(r.json.errors).toEqual([{ path: 'step', message: expect.stringContaining('1500') }]);
  });
});

describe('retention, by the service clock', () => {
  it('reads an older range from hour points, and prunes minutes then hours', async () => {
    const rows = async (resolution: number) =>
      Number(
        (
          await t.db
            .selectFrom('frame_replica_metrics')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('frame_id', '=', w.frame.id)
            .where('resolution', '=', resolution)
            .executeTakeFirstOrThrow()
        ).n,
      );
    expect([await rows(60), await rows(3600)]).toEqual([2, 2]);

    await advance(25 * 3600); // the sweep runs with the advance: minutes past 24 h go
    expect([await rows(60), await rows(3600)]).toEqual([0, 2]);
    const hour = new Date(Math.floor(minute.getTime() / 3600_000) * 3600_000);
    const since = hour.toISOString();
    const until = new Date(hour.getTime() + 7200_000).toISOString();
    const r = await metrics(`?since=${since}&until=${until}`);
    expect(r.status, r.text).toBe(200);
    expect(r.json.step).toBe(3600);
    expect(r.json.points[0]).toMatchObject({ at: since, requests: 100, memory_bytes: 370 });
    expectProblem(await metrics(`?since=${since}&until=${until}&step=60`), 422, 'step_too_fine');

    await advance(29 * 86400);
    expect([await rows(60), await rows(3600)]).toEqual([0, 0]);
  });

  it("goes with its frame's deletion", async () => {
    await sync(t, w.agent.token, {
      metrics: { replicas: [{ frame_id: w.frame.id, replica: 0, seconds: 5, cpu_seconds: 1 }] },
    });
    const count = () =>
      t.db
        .selectFrom('frame_replica_metrics')
        .select('frame_id')
        .where('frame_id', '=', w.frame.id)
        .execute();
    expect(await count()).toHaveLength(3); // its minute, five minutes and hour
    expect((await t.del(w.path, { token: w.ann.token })).status).toBeLessThan(300);
    expect(await count()).toHaveLength(0);
  });
});
