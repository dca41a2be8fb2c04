// Frame metrics stay bounded (issue 39): with the retention set short (1 h of minutes and five
// minutes, 1 day of hours), an agent syncing samples while the service clock moves on through
// the operator's clock (which runs the sweep) never leaves more rows per replica than the
// settings allow, and the rows kept are the newest, by the service clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testApp, type TestApp } from '../helpers/app.ts';
import { ADMIN, frameWithReaders, newFrame, sync } from '../helpers/frames.ts';
import { rowsPerSeriesBound } from '../../src/jobs/metrics-retention-dal.ts';

const RETENTION = { minuteHours: 1, hourDays: 1 };
const FRAMES = 4;
const REPLICAS = 2;

let t: TestApp;
let frameIds: string[];
let agentToken: string;

beforeAll(async () => {
  t = await testApp({
    env: { METRICS_MINUTE_RETENTION_HOURS: '1', METRICS_HOUR_RETENTION_DAYS: '1' },
  });
  const w = await frameWithReaders(t, 'retention-1');
  agentToken = w.agent.token;
  frameIds = [w.frame.id];
  for (let i = 1; i < FRAMES; i++) {
    const f = await newFrame(t, w.ann, w.frame.project_id, w.frame.space_id, { name: `w${i}` });
    await t.db.updateTable('frames').set({ agent_id: w.agent.id }).where('id', '=', f.id).execute();
    frameIds.push(f.id);
  }
});
afterAll(async () => {
  await t?.close();
});

/** One sync of 10-s samples for every replica of every frame, as an agent sends them. */
const report = () =>
  sync(t, agentToken, {
    metrics: {
      replicas: frameIds.flatMap((frame_id) =>
        Array.from({ length: REPLICAS }, (_, replica) => ({
          frame_id,
          replica,
          seconds: 10,
          cpu_seconds: 0.5,
          memory_bytes: 1000,
        })),
      ),
      requests: frameIds.map((frame_id) => ({
        frame_id,
        seconds: 10,
        status: { '1xx': 0, '2xx': 5, '3xx': 0, '4xx': 0, '5xx': 0 },
        latency: Array.from({ length: 15 }, (_, i) => (i === 3 ? 5 : 0)),
      })),
    },
  });

async function advance(seconds: number) {
  const r = await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } });
  expect(r.status, r.text).toBe(200);
}

/** The most rows any one series holds (of minutes, of hours), and its oldest of each. */
async function shape() {
  const { rows } = await sql<{
    most: number;
    minutes: number;
    hours: number;
    oldest_minute: Date;
    oldest_hour: Date;
  }>`select max(minutes + hours)::int as most, max(minutes)::int as minutes,
      max(hours)::int as hours, min(oldest_minute) as oldest_minute,
      min(oldest_hour) as oldest_hour from (
      select count(*) filter (where resolution = 60) as minutes,
        count(*) filter (where resolution = 3600) as hours,
        min(at) filter (where resolution = 60) as oldest_minute,
        min(at) filter (where resolution = 3600) as oldest_hour
      from frame_replica_metrics group by frame_id, replica
      union all
      select count(*) filter (where resolution = 60), count(*) filter (where resolution = 3600),
        min(at) filter (where resolution = 60), min(at) filter (where resolution = 3600)
      from frame_request_metrics group by frame_id) s`.execute(t.db);
  const r = rows[0];
  if (!r) throw new Error('no metrics rows');
  return r;
}

describe('metrics retention', () => {
  it('keeps every series under its bound while the clock runs for 28 h', async () => {
    const bound = rowsPerSeriesBound(RETENTION); // 61 minutes, 13 five minutes and 25 hours
    expect(bound).toBe(99);
    // Every minute for 70 minutes (the minutes fill up), every half hour for a day (the hours
    // fill up), then every minute again.
    const steps = [
      ...Array<number>(70).fill(60),
      ...Array<number>(48).fill(1800),
      ...Array<number>(70).fill(60),
    ];
    let most = 0;
    for (const s of steps) {
      await report();
      await advance(s);
      most = Math.max(most, (await shape()).most);
    }
    expect(most).toBeLessThanOrEqual(bound);
    const end = await shape();
    const now = t.clock.now().getTime();
    // About every minute of the last hour (the syncs are a minute and a moment apart, so a few
    // minutes have none), and the day's hours: the newest are kept, not fewer.
    expect(end.minutes).toBeGreaterThanOrEqual(55);
    expect(end.hours).toBeGreaterThanOrEqual(23);
    expect(now - end.oldest_minute.getTime()).toBeLessThanOrEqual(3600_000);
    expect(now - end.oldest_minute.getTime()).toBeGreaterThan(3540_000);
    expect(now - end.oldest_hour.getTime()).toBeLessThanOrEqual(86400_000);
    expect(now - end.oldest_hour.getTime()).toBeGreaterThan(86400_000 - 3600_000);
  }, 120_000);
});
