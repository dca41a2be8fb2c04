// Issue 39: metrics from a real container. The real service, the agent as a child process
// (`frameplane agent --runtime docker`, then `--runtime swarm`, sampling every second) on a real
// Docker Engine, and between them a pass-through proxy of the test's own that keeps each sync
// body the agent sends. A memory-hungry app (64 MiB more, held, a chunk at a time, once asked) shows its
// memory rise in the samples; they carry its CPU, its limit, its network, no restarts; and what
// the edge answered for the frame comes in the same bodies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newProject, newUser } from '../helpers/factories.ts';
import { defaultSpace, newFrame } from '../helpers/frames.ts';
import { waitFor } from '../helpers/wait.ts';
import { freePort } from '../../src/runner/processes.ts';
import { dockerClient } from '../../src/runner/runtimes/docker.ts';
import type { ReplicaMetric } from '../../src/runner/metrics/deltas.ts';
import type { RequestMetric } from '../../src/runner/edge/request-meter.ts';
import { gitFixture, hitFrame } from '../runner/fixture.ts';

const BIN = fileURLToPath(new URL('../../bin/frameplane.mjs', import.meta.url));
const MEMORY_MB = 256;
const MiB = 2 ** 20;
const docker = dockerClient();

let t: TestApp;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let through: number;
const agents: ChildProcess[] = [];
let proxy: Server | undefined;
let output: string[] = [];
/** The metrics of every sync body the agents sent, in order. */
const sent: Array<{ replicas?: ReplicaMetric[]; requests?: RequestMetric[] }> = [];
const context = () => `agent output (last lines):\n${output.join('\n')}`;

// Holds 64 MiB more once asked (/grow), 8 MiB every 200 ms, written so that the pages are in use.
const APP = {
  'package.json': JSON.stringify({
    name: 'hungry',
    private: true,
    scripts: { start: 'node server.js' },
  }),
  'server.js': [
    `const http = require('http');`,
    `const held = [];`,
    `function grow(n) { if (n === 0) return; held.push(Buffer.alloc(8 * 1024 * 1024, 1)); setTimeout(() => grow(n - 1), 200); }`,
    `http.createServer((req, res) => {`,
    `  if (req.url === '/grow') { grow(8); return res.end('growing'); }`,
    `  res.end('held ' + held.length * 8 + ' MiB');`,
    `}).listen(Number(process.env.PORT), () => console.log('hungry app up'));`,
  ].join('\n'),
};

/** Passes every request on to the service, keeping the metrics of each sync body. */
function recordingProxy(target: number): Promise<number> {
  const s = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c) => chunks.push(c))
      .on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.url?.startsWith('/v2/agent/sync') && body.length) {
          const metrics = JSON.parse(body.toString()).metrics;
          if (metrics) sent.push(metrics);
        }
        const out = request(
          {
            host: '127.0.0.1',
            port: target,
            method: req.method,
            path: req.url,
            headers: req.headers,
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        out.on('error', () => res.destroy());
        out.end(body);
      });
  });
  proxy = s;
  return new Promise((r) => s.listen(0, '127.0.0.1', () => r((s.address() as AddressInfo).port)));
}

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-metrics-'));
  repo = gitFixture(tmp);
  repo.pushFiles(APP, 'hungry');
  through = await recordingProxy((t.app.server.address() as AddressInfo).port);
});

afterAll(async () => {
  await Promise.all(
    agents
      .filter((a) => a.exitCode === null)
      .map((a) => {
        a.kill('SIGTERM');
        return new Promise((r) => a.once('exit', r));
      }),
  );
  // What the agents left running (they leave frames running on exit, for adoption) goes now.
  const label = JSON.stringify({ label: ['frameplane.frame'] });
  const services = await docker.listServices({ filters: label });
  await Promise.all(
    services.map((s) =>
      docker
        .getService(s.ID)
        .remove()
        .catch(() => {}),
    ),
  );
  const left = await docker.listContainers({ all: true, filters: label });
  await Promise.all(
    left.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
  proxy?.close();
  await t?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** An agent on this runtime (a child process, syncing through the proxy) and a frame on it. */
async function frameOn(runtime: 'docker' | 'swarm') {
  const ann = await newUser(t, `ann-${runtime}`);
  const project = await newProject(t, ann);
  const space = await defaultSpace(t, ann, project.id);
  const reg = await t.post(`/v2/projects/${project.id}/agents`, {
    token: ann.token,
    body: { name: runtime },
  });
  expect(reg.status, reg.text).toBe(201);
  const edgePort = await freePort();
  const agent = spawn(
    process.execPath,
    [BIN, 'agent', '--server', `http://127.0.0.1:${through}`, '--data', join(tmp, runtime)],
    {
      env: {
        ...process.env,
        FRAMEPLANE_AGENT_TOKEN: reg.json.token,
        GIT_BASE_URL: repo.gitBaseUrl,
        FRAME_RUNTIME: runtime,
        EDGE_HTTP_PORT: String(edgePort),
        FRAME_MEMORY_MB: String(MEMORY_MB),
        METRICS_INTERVAL_SECONDS: '1',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  agents.push(agent);
  for (const s of [agent.stdout, agent.stderr])
    s?.on('data', (d: Buffer) => {
      output = [...output, ...d.toString().split('\n').filter(Boolean)].slice(-60);
    });
  const f = await newFrame(t, ann, project.id, space, {
    agent_id: reg.json.id,
    port: 8080,
    git_repository: 'app',
    git_repository_owner: 'acme',
  });
  return { edgePort, host: f.hostname as string, id: f.id as string };
}

describe.each(['docker', 'swarm'] as const)('metrics of a real container (%s)', (runtime) => {
  it("show a memory-hungry app's memory rise, with its CPU, limit and network", {
    timeout: 300_000,
  }, async () => {
    const { edgePort, ...frame } = await frameOn(runtime);
    const samples = () =>
      sent.flatMap((m) => m.replicas ?? []).filter((m) => m.frame_id === frame.id);
    await waitFor(
      'the app to answer through the edge',
      async () => {
        const r = await hitFrame(edgePort, frame.host);
        return 'body' in r && r.body === 'held 0 MiB';
      },
      { timeoutMs: 180_000, everyMs: 500, context },
    );
    // A few samples before it grows: its memory at rest.
    await waitFor('samples of the app at rest', () => samples().length >= 3, {
      timeoutMs: 30_000,
      context,
    });
    const before = samples().at(-1) as ReplicaMetric;
    expect(before.memory_bytes).toBeGreaterThan(5 * MiB); // node itself
    expect(before.memory_bytes).toBeLessThan(before.memory_limit_bytes as number);
    const rest = samples().length;

    const grew = await hitFrame(edgePort, frame.host, '/grow');
    expect('body' in grew && grew.body).toBe('growing');
    const risen = await waitFor(
      'a sample with 64 MiB more memory',
      () => samples().find((m) => (m.memory_bytes ?? 0) >= (before.memory_bytes ?? 0) + 60 * MiB),
      { timeoutMs: 60_000, everyMs: 200, context },
    );
    const r = await hitFrame(edgePort, frame.host);
    expect('body' in r && r.body).toBe('held 64 MiB');

    // Every sample of the app: its own replica, about the interval, what was used in it.
    const all = samples();
    for (const m of all) {
      expect(m.replica).toBe(0);
      expect(m.seconds).toBeGreaterThan(0.5);
      expect(m.seconds).toBeLessThan(10);
      expect(m.memory_limit_bytes).toBe(MEMORY_MB * MiB);
      expect(m.restarts).toBe(0);
    }
    // Deltas, not running totals: allocating and touching 64 MiB took CPU in some interval
    // since the app rested, and the requests came in over its network.
    const since = all.slice(rest);
    expect(Math.max(...since.map((m) => m.cpu_seconds))).toBeGreaterThan(0.01);
    expect(all.reduce((n, m) => n + (m.net_rx_bytes ?? 0), 0)).toBeGreaterThan(0);
    expect(risen.memory_bytes).toBeLessThan(MEMORY_MB * MiB);

    // The service took every body: nothing was refused, nothing dropped.
    expect(output.join('\n')).not.toMatch(/does not accept it|sync refused a report/);
    // What the edge answered for the frame rides in the same bodies: 2xx, with latencies.
    await waitFor(
      'the edge’s counts of the frame',
      () => {
        const mine = sent.flatMap((m) => m.requests ?? []).filter((q) => q.frame_id === frame.id);
        return mine.reduce((n, q) => n + q.status['2xx'], 0) >= 3 ? mine : undefined;
      },
      { timeoutMs: 10_000, context },
    );
  });
});
