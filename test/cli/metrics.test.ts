// `frameplane frames metrics` (issue 39): the points of GET …/metrics as a table or JSON, by
// name or through the directory's link; run as a real process against a real service.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { sync } from '../helpers/frames.ts';
import { bytesText, stepOf } from '../../src/cli/frame-metrics.ts';
import { createWebFrame, expectProblem, run, runIn, runJson, userEnv } from './run.ts';

let t: TestApp;
let server: string;
let env: Record<string, string>;
beforeAll(async () => {
  t = await testApp();
  server = await listenOn(t);
  const ann = await newUser(t, 'ann');
  env = userEnv(server, ann.token);
  const project = await runJson(['projects', 'create', 'Shop'], env);
  const agent = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: 'box' },
  });
  expect(agent.status, agent.text).toBe(201);
  const frame = await runJson(createWebFrame(agent.json.id), env);
  const MiB = 1024 * 1024;
  await sync(t, agent.json.token, {
    metrics: {
      replicas: [
        {
          frame_id: frame.id,
          replica: 0,
          seconds: 10,
          cpu_seconds: 2.5,
          memory_bytes: 256 * MiB,
          memory_limit_bytes: 512 * MiB,
        },
      ],
      requests: [
        {
          frame_id: frame.id,
          seconds: 10,
          status: { '1xx': 0, '2xx': 117, '3xx': 0, '4xx': 0, '5xx': 3 },
          // all in (10, 20] ms: p95 at 19.5 ms
          latency: Array.from({ length: 15 }, (_, i) => (i === 4 ? 120 : 0)),
        },
      ],
    },
  });
});
afterAll(() => t.close());

describe('frames metrics', () => {
  it('prints the last hour by minutes, the sampled minute filled in', async () => {
    const r = await run(['frames', 'metrics', 'web', '-p', 'Shop'], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^TIME\s+CPU\s+MEMORY\s+REQ\/S\s+5XX\s+P95$/);
    expect(lines.length).toBeGreaterThanOrEqual(61);
    const sampled = lines.filter((l) => l.includes('MiB'));
    expect(sampled).toHaveLength(1);
    expect(sampled[0]).toMatch(/ 0\.25\s+256 MiB \/ 512 MiB\s+2\s+3\s+19\.5 ms$/);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d\s+-\s+-\s+0\s+0\s+-$/);
  });

  it('--json answers the API, --since and --step choose the points', async () => {
    const m = await runJson(['frames', 'metrics', 'web', '-p', 'Shop', '--since', '5h'], env);
    expect(m.step).toBe(60);
    const coarse = await runJson(
      ['frames', 'metrics', 'web', '-p', 'Shop', '--since', '6h', '--step', '1h'],
      env,
    );
    expect(coarse.step).toBe(3600);
    expect(coarse.points.length).toBeGreaterThanOrEqual(6);
    const point = coarse.points.find((p: { requests: number }) => p.requests > 0);
    expect(point).toMatchObject({ requests: 120, status: { '5xx': 3 }, memory_bytes: 268435456 });
  });

  it('takes the linked frame, and reports a refused step as the service words it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'frameplane-metrics-'));
    expect((await runIn(dir, ['link', 'Shop', '--frame', 'web'], env)).code).toBe(0);
    const linked = await runIn(dir, ['frames', 'metrics', '--json'], env);
    expect(linked.code, linked.stderr).toBe(0);
    expect(JSON.parse(linked.stdout).step).toBe(60);
    expectProblem(
      await runIn(dir, ['frames', 'metrics', '--step', '90s'], env),
      5,
      422,
      'validation_failed',
    );
  });

  it('reads steps and bytes as people write them', () => {
    expect([stepOf('300'), stepOf('5m'), stepOf('1h'), stepOf('1d')]).toEqual([
      300, 300, 3600, 86400,
    ]);
    expect(stepOf('soon')).toBeNaN();
    expect([bytesText(null), bytesText(512), bytesText(1536), bytesText(300 * 1024 ** 2)]).toEqual([
      null,
      '512 B',
      '1.5 KiB',
      '300 MiB',
    ]);
  });
});
