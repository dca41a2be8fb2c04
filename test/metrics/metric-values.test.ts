// What the metrics say moves with what happens: pool use, queue depth, agents online, long polls
// and event streams held, edge routes and certificates; and a read that cannot finish in its
// bound drops its own families from the scrape instead of failing it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser, type TestUser } from '../helpers/factories.ts';
import { ADMIN, cloudAgent, defaultSpace, newFrame, sync } from '../helpers/frames.ts';
import { openEventStream } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';
import { connectionsOf } from '../../src/db/database.ts';
import type { Held } from '../../src/db/connections.ts';
import { queueDelivery } from '../../src/mail/mail-dal.ts';
import { lease, recordFailure, storeIssued } from '../../src/certificates/certificates-dal.ts';
import { scrape } from './scrape.ts';

let t: TestApp;
let ann: TestUser;
let project: { id: string };
beforeAll(async () => {
  t = await testApp();
  ann = await newUser(t, 'ann');
  project = await newProject(t, ann);
});
afterAll(async () => {
  await t.close();
});

describe('database pools', () => {
  it('report their connections in use and their limit', async () => {
    const pool = connectionsOf(t.db);
    if (!pool) throw new Error('the test app has no connections of its own');
    // Waits, rather than one look: a batch of tokens' last uses may hold one for a moment.
    const inUse = (n: number) =>
      waitFor(`${n} connections of the main pool in use`, async () => {
        const m = await scrape(t);
        return m.value('frameplane_db_pool_connections', { pool: 'main', state: 'in_use' }) === n;
      });
    await inUse(0);
    const held = await pool.hold();
    try {
      await inUse(1);
    } finally {
      held.release();
    }
    await inUse(0);
    const m = await scrape(t);
    expect(m.value('frameplane_db_pool_max_connections', { pool: 'main' })).toBe(8);
    expect(m.value('frameplane_db_pool_max_connections', { pool: 'read_lane' })).toBe(2);
  });

  it('with every connection taken: waits show, the reads time out alone, the scrape answers', async () => {
    const connections = connectionsOf(t.db);
    if (!connections) throw new Error('the test app has no connections of its own');
    const held: Held[] = [];
    for (let i = 0; i < 8; i++) held.push(await connections.hold());
    const waiting = connections.hold(); // the ninth waits for a connection
    try {
      const started = Date.now();
      const m = await scrape(t);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(
        m.value('frameplane_db_pool_waiting_requests', { pool: 'main' }),
      ).toBeGreaterThanOrEqual(1);
      for (const collector of ['agents', 'job_queue', 'edge_routes', 'edge_certificates']) {
        expect(m.value('frameplane_metrics_collector_up', { collector })).toBe(0);
        expect(
          m.value('frameplane_metrics_collector_errors_total', { collector }),
        ).toBeGreaterThanOrEqual(1);
      }
      expect(m.value('frameplane_agents_online', { kind: 'cloud' })).toBeUndefined();
      expect(m.value('frameplane_job_queue_jobs', { state: 'ready' })).toBeUndefined();
    } finally {
      for (const h of held) h.release();
      (await waiting).release();
    }
    await waitFor('the collectors to read again', async () => {
      const m = await scrape(t);
      return m.value('frameplane_metrics_collector_up', { collector: 'agents' }) === 1;
    });
  });
});

describe('the job queue', () => {
  it('counts the jobs ready to run', async () => {
    const ready = async () =>
      (await scrape(t)).value('frameplane_job_queue_jobs', { state: 'ready' }) ?? 0;
    const before = await ready();
    await queueDelivery(t.db, 'eml_metrics_test_1', 5);
    await queueDelivery(t.db, 'eml_metrics_test_2', 5);
    expect(await ready()).toBe(before + 2);
  });
});

describe('agents', () => {
  it('are online once they sync, offline after AGENT_OFFLINE_AFTER_SECONDS', async () => {
    const count = async (name: string) => (await scrape(t)).value(name, { kind: 'cloud' }) ?? 0;
    const registered = await count('frameplane_agents');
    const online = await count('frameplane_agents_online');
    const agent = await cloudAgent(t, 'metrics-agent');
    expect(await count('frameplane_agents')).toBe(registered + 1);
    expect(await count('frameplane_agents_online')).toBe(online);
    await sync(t, agent.token);
    expect(await count('frameplane_agents_online')).toBe(online + 1);
    const offline = t.config.agentOfflineAfterSeconds + 1;
    const moved = await t.post('/v2/admin/clock', {
      token: ADMIN,
      body: { advance_seconds: offline },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(await count('frameplane_agents_online')).toBe(0);
  });
});

describe('long polls and event streams held', () => {
  const held = async (kind: string) =>
    (await scrape(t)).value('frameplane_long_polls_held', { kind });

  it("count an agent's sync while it waits", async () => {
    const agent = await cloudAgent(t, 'metrics-poller');
    await sync(t, agent.token);
    expect(await held('agent_sync')).toBe(0);
    const { state } = (await sync(t, agent.token)) as unknown as { state: string };
    const poll = sync(t, agent.token, { known_state: state }, 3);
    await t.untilHolding('frameplane_agent', agent.id);
    expect(await held('agent_sync')).toBe(1);
    await poll;
    expect(await held('agent_sync')).toBe(0);
  });

  it('count an event stream while it is open', async () => {
    const origin = await listenOn(t);
    expect(await held('event_stream')).toBe(0);
    const stream = await openEventStream(`${origin}/v2/projects/${project.id}/events`, ann.token);
    try {
      expect(stream.res.status).toBe(200);
      expect(await held('event_stream')).toBe(1);
    } finally {
      await stream.close();
    }
    await waitFor('the stream to be let go', async () => (await held('event_stream')) === 0);
  });
});

describe('the edges', () => {
  it('count routed hostnames and certificates by state, with the earliest expiry', async () => {
    const space = await defaultSpace(t, ann, project.id);
    const before = await scrape(t);
    const routes = before.value('frameplane_edge_routes', { kind: 'frame' }) ?? 0;
    await newFrame(t, ann, project.id, space, { name: 'metrics-web' }); // placed on a cloud agent
    const placed = await scrape(t);
    expect(placed.value('frameplane_edge_routes', { kind: 'frame' })).toBe(routes + 1);
    expect(
      placed.value('frameplane_edge_certificate_earliest_expiry_timestamp_seconds'),
    ).toBeUndefined();

    const now = t.clock.now();
    const until = new Date(now.getTime() + 60_000);
    for (const host of ['a.metrics.test', 'b.metrics.test', 'c.metrics.test', 'd.metrics.test'])
      expect(await lease(t.db, host, now, until)).toBe(true);
    await recordFailure(t.db, 'b.metrics.test', 'refused', () => until);
    const issued = (fingerprint: string, notAfter: Date) => ({
      certificate: `CHAIN ${fingerprint}`,
      privateKeySealed: t.core.sealer.seal(`KEY ${fingerprint}`),
      fingerprint,
      notBefore: new Date(now.getTime() - 86_400_000),
      notAfter,
      renewAt: notAfter,
    });
    const soon = new Date(Math.floor(now.getTime() / 1000) * 1000 + 7 * 86_400_000);
    await storeIssued(t.db, 'c.metrics.test', issued('fp-c', soon), t.config.appsDomain);
    const past = new Date(now.getTime() - 1000);
    await storeIssued(t.db, 'd.metrics.test', issued('fp-d', past), t.config.appsDomain);

    const m = await scrape(t);
    const state = (s: string) => m.value('frameplane_edge_certificates', { state: s });
    expect([state('valid'), state('expired'), state('pending'), state('failing')]).toEqual([
      1, 1, 1, 1,
    ]);
    const earliest = m.value('frameplane_edge_certificate_earliest_expiry_timestamp_seconds');
    expect(earliest).toBeCloseTo(past.getTime() / 1000, 0);
    await storeIssued(t.db, 'd.metrics.test', issued('fp-d2', soon), t.config.appsDomain);
    const renewed = await scrape(t);
    expect(renewed.value('frameplane_edge_certificates', { state: 'valid' })).toBe(2);
    expect(renewed.value('frameplane_edge_certificate_earliest_expiry_timestamp_seconds')).toBe(
      soon.getTime() / 1000,
    );
  });
});
