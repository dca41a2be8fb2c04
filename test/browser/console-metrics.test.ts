// The frame page's Metrics tab (issue 39), fed through the real path: a cloud agent's syncs
// carry replica and request samples, and the service clock moves a minute between them, so the
// charts have a point per minute (and a gap where a minute had none). A viewer opens the tab:
// words while nothing was reported, then, on the tab's own refresh, the charts (a canvas each)
// whose legends and summaries say the latest minute's values; a later sample reaches the same
// charts (no new canvas); another range keeps them; the overview shows CPU and memory now. Both
// widths, no sideways scroll, no failed request, no error in the page.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { projectWithReaders } from '../helpers/factories.ts';
import { failedRequests } from './browser.ts';
import { cloudAgent, defaultSpace, framePath, newFrame, serveAt, sync } from '../helpers/frames.ts';
import {
  asPhone,
  closeClean,
  consoleSuite,
  overflow,
  person,
  screenshots,
  signIn,
} from './console.ts';

const s = consoleSuite();

const KiB = 1024;
const MiB = 1024 * KiB;
/** A refresh every 30 s, and some room: the longest a change may take to show. */
const REFRESHED = { timeout: 45_000, interval: 500 };

/** Latency counts per bucket (LATENCY_BOUNDS_MS: …, 5, 10, 20, 50, 100, 200, …): 300 in
 *  (5, 10], 270 in (20, 50], 30 in (100, 200]; so p50 = 10, p95 = 50, p99 = 180 ms. */
const latency = (k = 1) =>
  [0, 0, 0, 300, 0, 270, 0, 30, 0, 0, 0, 0, 0, 0, 0].map((n) => Math.round(n * k));

const r = Math.round;

/** One minute's samples; `k` scales them, so that the lines are not flat. */
function minute(frameId: string, k: number) {
  const replica = (replica: number, cpu: number, memory: number, rx: number, tx: number) => ({
    frame_id: frameId,
    replica,
    seconds: 10,
    cpu_seconds: cpu * k,
    memory_bytes: r(memory * k),
    memory_limit_bytes: 512 * MiB,
    net_rx_bytes: r(rx * k),
    net_tx_bytes: r(tx * k),
  });
  return {
    replicas: [
      replica(0, 2.5, 128 * MiB, 10 * KiB, 50 * KiB),
      replica(1, 5, 192 * MiB, 30 * KiB, 150 * KiB),
    ],
    requests: [
      {
        frame_id: frameId,
        seconds: 10,
        status: { '1xx': 0, '2xx': r(540 * k), '3xx': 0, '4xx': r(54 * k), '5xx': r(6 * k) },
        latency: latency(k),
      },
    ],
  };
}

/** Moves the service clock to a second past the next minute's start. */
async function nextMinute() {
  const now = s.t.clock.now().getTime();
  await s.t.clock.advance((Math.ceil(now / 60_000) * 60_000 + 1000 - now) / 1000);
}

/** The time of the API's last point with a CPU value (checked to be `cores`), as the page
 *  writes it. */
async function lastSampled(p: Page, path: string, token: string, cores: number) {
  const answer = await s.t.get(`${path}/metrics`, { token });
  expect(answer.status, answer.text).toBe(200);
  const last = answer.json.points
    .filter((x: { cpu_cores: unknown }) => x.cpu_cores !== null)
    .at(-1);
  expect(last.cpu_cores).toBe(cores);
  return p.evaluate(
    (iso) => new Date(iso).toLocaleString(undefined, { hour: 'numeric', minute: '2-digit' }),
    last.at,
  );
}

const summary = (p: Page, chart: string) => p.locator(`#chart-${chart}-latest`).textContent();
/** The chart's legend as "label: value" lines (its colon is drawn by CSS). */
const legend = (p: Page, chart: string) =>
  p
    .locator(`#chart-${chart} .u-legend tr`)
    .evaluateAll((rows) =>
      rows.map(
        (row) => `${row.querySelector('th')?.textContent}: ${row.querySelector('td')?.textContent}`,
      ),
    );

describe('console: a frame’s metrics', () => {
  it('empty, then charts of the samples, refreshed in place, at both widths', async () => {
    const { ann, viewer, project } = await projectWithReaders(s.t);
    const space = await defaultSpace(s.t, ann, project.id);
    const agent = await cloudAgent(s.t);
    const frame = await newFrame(s.t, ann, project.id, space, { replica_count: 2 });
    const path = framePath(frame);
    await serveAt(s.t, agent.token, frame.id, 'c'.repeat(40));

    const vic = await person(s.browser, s.t.base);
    const p = vic.page;
    const failed = failedRequests(p);
    await signIn(p, viewer.email);
    await p.goto(`/console/projects/${project.id}/spaces/${space}/frames/${frame.id}`);
    await p.getByRole('tab', { name: 'Metrics' }).click();
    expect(new URL(p.url()).search).toBe('?tab=metrics');
    await p.getByText('No metrics yet: a running frame reports every 10 s.').waitFor();
    expect(await p.getByRole('button', { name: '1 h' }).getAttribute('aria-pressed')).toBe('true');

    // Twelve minutes of samples, the ninth missing (a gap); the last at k = 1: known values.
    // The clock goes to a second past each next minute's start: each minute's sync falls in its
    // own minute, and the last one is over when the page reads it (the tab leaves the requests
    // of a minute still going on out).
    await nextMinute();
    for (let i = 11; i >= 0; i--) {
      if (i !== 3)
        await sync(s.t, agent.token, { metrics: minute(frame.id, i === 0 ? 1 : 1 + i / 10) });
      await nextMinute();
    }
    const at = await lastSampled(p, path, viewer.token, 0.75);

    // The tab reads again by itself: the charts replace the words.
    const canvases = p.locator('#metrics-charts canvas');
    await expect.poll(() => canvases.count(), REFRESHED).toBe(5);
    expect(await summary(p, 'cpu')).toBe(
      `At ${at}: Total 0.75 cores, Replica 0 0.25 cores, Replica 1 0.5 cores.`,
    );
    expect(await summary(p, 'memory')).toBe(
      `At ${at}: Total 320 MiB, Limit 1 GiB, Replica 0 128 MiB, Replica 1 192 MiB.`,
    );
    expect(await summary(p, 'requests')).toBe(
      `At ${at}: 2xx 9 req/s, 3xx 0 req/s, 4xx 0.9 req/s, 5xx 0.1 req/s.`,
    );
    expect(await summary(p, 'latency')).toBe(`At ${at}: p50 10 ms, p95 50 ms, p99 180 ms.`);
    expect(await summary(p, 'network')).toBe(`At ${at}: In 4 KiB/s, Out 20 KiB/s.`);
    // The legends show the same values while no time is pointed at.
    expect(await legend(p, 'cpu')).toEqual([
      `Time: ${at}`,
      'Total: 0.75 cores',
      'Replica 0: 0.25 cores',
      'Replica 1: 0.5 cores',
    ]);
    expect(await legend(p, 'memory')).toContain('Limit: 1 GiB');
    expect(await legend(p, 'latency')).toContain('p99: 180 ms');
    // Each chart: a heading, an image labelled in words, described by its summary.
    const cpu = p.getByRole('img', { name: 'CPU in cores over the last hour' });
    expect(await cpu.getAttribute('aria-describedby')).toBe('chart-cpu-latest');
    expect(await p.getByRole('heading', { level: 3 }).allTextContents()).toEqual([
      'CPU',
      'Memory',
      'Requests',
      'Latency',
      'Network',
    ]);
    // The minutes are drawn: the canvas has pixels of the CPU line's colour (the palette's blue).
    expect(await inked(p, 'cpu')).toBe(true);

    // A later minute's samples reach the same canvases (setData, not new charts), after an
    // empty minute (a gap). The page reads within 59 s of the minute's end: no other minute ends.
    await canvases.evaluateAll((all) => {
      for (const c of all) c.setAttribute('data-seen', 'yes');
    });
    await nextMinute();
    await sync(s.t, agent.token, { metrics: minute(frame.id, 2) });
    await nextMinute();
    const later = await lastSampled(p, path, viewer.token, 1.5);
    await expect
      .poll(() => summary(p, 'requests'), REFRESHED)
      .toBe(`At ${later}: 2xx 18 req/s, 3xx 0 req/s, 4xx 1.8 req/s, 5xx 0.2 req/s.`);
    expect(await summary(p, 'cpu')).toBe(
      `At ${later}: Total 1.5 cores, Replica 0 0.5 cores, Replica 1 1 core.`,
    );
    expect(await p.locator('#metrics-charts canvas[data-seen="yes"]').count()).toBe(5);

    // Another range: the same charts, their label says which.
    await p.getByRole('button', { name: '24 h' }).click();
    await p.getByRole('img', { name: 'CPU in cores over the last 24 hours' }).waitFor();
    expect(await p.getByRole('button', { name: '24 h' }).getAttribute('aria-pressed')).toBe('true');
    expect(await p.locator('#metrics-charts canvas[data-seen="yes"]').count()).toBe(5);
    await screenshots(p, 'frame-metrics-24h', false);
    await p.getByRole('button', { name: '1 h' }).click();
    await cpu.waitFor();

    // The overview: CPU and memory now, each with its last hour's line.
    await p.getByRole('tab', { name: 'Overview' }).click();
    await expect.poll(() => p.locator('#usage-cpu').textContent()).toBe('CPU 1.5 cores');
    expect(await p.locator('#usage-memory').textContent()).toBe('Memory 640 MiB of 1 GiB');
    expect(await p.locator('.usage canvas').count()).toBe(2);
    await screenshots(p, 'frame-metrics-overview');
    await asPhone(p);
    expect(await overflow(p), 'the overview on a phone').toBe(0);
    await p.getByRole('link', { name: 'Metrics' }).click();
    await cpu.waitFor();

    await asPhone(p);
    await expect.poll(() => chartWidths(p)).toEqual({ fits: true });
    expect(await overflow(p)).toBe(0);
    await screenshots(p, 'frame-metrics');
    await expect.poll(() => chartWidths(p)).toEqual({ fits: true });
    expect(await overflow(p)).toBe(0);
    expect(failed).toEqual([]);
    await closeClean(vic);
  }, 150_000);
});

/** Whether every chart's canvas is as wide as its box, and no wider. */
const chartWidths = (p: Page) =>
  p.evaluate(() => ({
    fits: [...document.querySelectorAll<HTMLElement>('.chart-plot')].every((box) => {
      const canvas = box.querySelector('canvas')?.getBoundingClientRect().width ?? 0;
      return Math.abs(canvas - box.clientWidth) <= 1;
    }),
  }));

/** Whether the chart's canvas has a pixel of the palette's blue (its first series' colour). */
const inked = (p: Page, chart: string) =>
  p.evaluate((id) => {
    const canvas = document.querySelector<HTMLCanvasElement>(`#chart-${id} canvas`);
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return false;
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    // --blue is #2458d3; antialiasing blends its edges, its middle stays close.
    for (let i = 0; i < data.length; i += 4)
      if (
        Math.abs((data[i] ?? 0) - 0x24) < 12 &&
        Math.abs((data[i + 1] ?? 0) - 0x58) < 12 &&
        Math.abs((data[i + 2] ?? 0) - 0xd3) < 12
      )
        return true;
    return false;
  }, chart);
