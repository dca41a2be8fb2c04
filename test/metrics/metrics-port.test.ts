// The METRICS_PORT listener (GET /metrics without a token, nothing else) and the job failures
// that graphile-worker reports, counted from its events.
import { EventEmitter } from 'node:events';
import type { WorkerEvents } from 'graphile-worker';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { createPgPool } from '../../src/db/database.ts';
import { startWorker } from '../../src/jobs/worker.ts';
import { queueDelivery } from '../../src/mail/mail-dal.ts';
import { startMetricsListener, type MetricsListener } from '../../src/metrics/metrics-listener.ts';
import { parseMetrics, scrape } from './scrape.ts';

let t: TestApp;
let listener: MetricsListener;
let origin: string;
beforeAll(async () => {
  t = await testApp();
  listener = await startMetricsListener(t.services.metrics, { host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${listener.port}`;
});
afterAll(async () => {
  await listener.close();
  await t.close();
});

describe('the METRICS_PORT listener', () => {
  it('serves GET /metrics without a token, the same families as the route', async () => {
    const res = await fetch(`${origin}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const plain = parseMetrics(await res.text());
    const routed = await scrape(t);
    expect(plain.families.map((f) => f.name)).toEqual(routed.families.map((f) => f.name));
    const head = await fetch(`${origin}/metrics?x=1`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('serves nothing else', async () => {
    expect((await fetch(`${origin}/`)).status).toBe(404);
    expect((await fetch(`${origin}/v2/openapi.json`)).status).toBe(404);
    const post = await fetch(`${origin}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('closes with a scraper still connected', async () => {
    const other = await startMetricsListener(t.services.metrics, { host: '127.0.0.1', port: 0 });
    expect((await fetch(`http://127.0.0.1:${other.port}/metrics`)).status).toBe(200);
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('job failures', () => {
  it('counts each failed attempt, and the job given up', async () => {
    const events = new EventEmitter() as WorkerEvents;
    t.services.metrics.countJobFailures(events);
    const pool = createPgPool(t.url, 4);
    const worker = await startWorker(
      pool,
      {
        send_email: async () => {
          throw new Error('the mail server refused it');
        },
        sweep: async () => {},
      },
      pino({ level: 'silent' }),
      1,
      events,
    );
    try {
      await queueDelivery(t.db, 'eml_metrics_failing', 1);
      const m = await waitFor('the failure to be counted', async () => scrape(t), {
        until: (m) => m.value('frameplane_jobs_failed_total', { task: 'send_email' }) === 1,
      });
      expect(m.value('frameplane_job_attempts_failed_total', { task: 'send_email' })).toBe(1);
      await waitFor(
        'the job to show as given up',
        async () => (await scrape(t)).value('frameplane_job_queue_jobs', { state: 'failed' }) === 1,
      );
    } finally {
      await worker.stop();
      await pool.end();
    }
  });
});
