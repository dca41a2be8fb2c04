// What the edge counts per frame (issue 39), on both data planes: the built-in one and
// HAProxy (Debian's 2.6, counted from its access lines on stdout). Requests with known statuses
// and one slow answer come out as the right counts per status class, and latencies in the
// right buckets; the edge's own page for a stopped frame counts for that frame, an unknown host
// for none, a WebSocket as a 1xx without a latency. What the edge failed itself (its page for
// a stopped frame, a replica that refuses connections), and that alone, is a line of the
// frame's log. All traffic goes to loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { LATENCY_BOUNDS_MS } from '../../src/agent-api/sync-items.ts';
import { startEdge, type Edge, type EdgePlane } from '../../src/runner/edge/edge.ts';
import type { FrameRequests } from '../../src/runner/edge/request-meter.ts';
import { hit } from '../runner/fixture.ts';
import { freePort } from '../../src/runner/processes.ts';
import { waitFor } from '../helpers/wait.ts';

const SLOW_MS = 300;
const dirs: string[] = [];
const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** An app answering `/<status>`, after `?ms=` milliseconds; it takes WebSockets and ends them. */
async function app() {
  const s = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const status = Number(url.pathname.slice(1)) || 200;
    setTimeout(
      () => {
        if (status === 302) res.setHeader('location', '/');
        res.writeHead(status).end('ok');
      },
      Number(url.searchParams.get('ms') ?? 0),
    );
  });
  s.on('upgrade', (_req, socket) => {
    socket.end('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { host: '127.0.0.1', port: (s.address() as AddressInfo).port };
}

/** A WebSocket-shaped upgrade through the edge; resolves once the connection closed. */
const upgrade = (port: number, host: string) =>
  new Promise<string>((resolve) => {
    let got = '';
    const c = connect(port, '127.0.0.1', () =>
      c.write(`GET /ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`),
    );
    c.on('data', (d) => (got += d)).on('close', () => resolve(got.split('\r\n')[0] ?? ''));
    c.on('error', () => c.destroy());
  });

/** What the edge counted, summed over every take since the last call. */
function counter(edge: Edge) {
  let sum = new Map<string, FrameRequests>();
  return {
    read() {
      for (const [frame, r] of edge.requests.take()) {
        const held = sum.get(frame);
        if (!held) sum.set(frame, r);
        else {
          for (const c of Object.keys(r.status) as Array<keyof FrameRequests['status']>)
            held.status[c] += r.status[c];
          held.latency = held.latency.map((n, i) => n + (r.latency[i] ?? 0));
        }
      }
      return sum;
    },
    reset() {
      edge.requests.take();
      sum = new Map();
    },
  };
}

const total = (r?: FrameRequests) => Object.values(r?.status ?? {}).reduce((a, b) => a + b, 0);

describe.each<EdgePlane>(['builtin', 'haproxy'])('the %s plane', (plane) => {
  it('counts each frame’s answers by status class, with their latency in the right bucket', async () => {
    const dir = mkdtempSync(join(tmpdir(), `fp-edge-requests-${plane}-`));
    dirs.push(dir);
    const refused: string[] = [];
    const log = pino({ level: 'error' }, { write: (l: string) => void refused.push(l) });
    const lines: Array<[string, string]> = [];
    const onLine = (frameId: string, line: string) => void lines.push([frameId, line]);
    const edge = await startEdge({
      port: 0,
      plane,
      dir: join(dir, 'edge'),
      slots: 10,
      log,
      onLine,
    });
    try {
      const port = edge.info?.http_port as number;
      edge.routes.set({
        frameId: 'frm_web',
        hosts: ['web.example.test'],
        state: 'running',
        upstreams: [await app()],
      });
      edge.routes.set({
        frameId: 'frm_off',
        hosts: ['off.example.test'],
        state: 'stopped',
        upstreams: [],
      });
      // A replica whose port nothing listens on: every connection refused.
      const gone = { host: '127.0.0.1', port: await freePort() };
      edge.routes.set({
        frameId: 'frm_gone',
        hosts: ['gone.example.test'],
        state: 'running',
        upstreams: [gone],
      });
      await waitFor('the frame served', async () => {
        const r = await hit(port, '/200', 'web.example.test');
        return 'status' in r && r.status === 200;
      });
      const seen = counter(edge);
      // Warm (connections to the app, the code's first run), then count from nothing: once a
      // last request to another frame is counted, every earlier one is.
      for (let i = 0; i < 5; i++) await hit(port, '/200', 'web.example.test');
      await hit(port, '/', 'off.example.test');
      await waitFor('the warm-up counted', () => seen.read().get('frm_off'));
      seen.reset();
      lines.length = 0;

      const asked: Array<[string, string, number]> = [
        ...Array.from({ length: 6 }, (): [string, string, number] => [
          'web.example.test',
          '/200',
          200,
        ]),
        ['web.example.test', `/201?ms=${SLOW_MS}`, 201],
        ['web.example.test', '/302', 302],
        ['web.example.test', '/404', 404],
        ['web.example.test', '/404', 404],
        ['web.example.test', '/500', 500],
        ['off.example.test', '/', 503],
        ['off.example.test', '/?q=1', 503],
        ['nobody.example.test', '/', 404],
      ];
      for (const [host, path, status] of asked) {
        const r = await hit(port, path, host);
        expect('status' in r && r.status, `${host}${path}`).toBe(status);
      }
      expect(await upgrade(port, 'web.example.test')).toMatch(/^HTTP\/1\.1 101/);
      // Refused: the built-in plane answers 502 at once, HAProxy 503 after its 3 retries.
      const refusedStatus = plane === 'builtin' ? 502 : 503;
      for (const path of ['/a', '/b']) {
        const r = await hit(port, path, 'gone.example.test', 10_000); // HAProxy: 1 s a retry
        expect('status' in r && r.status, path).toBe(refusedStatus);
      }

      const counted = await waitFor('every answer counted', () => seen.read(), {
        until: (m) =>
          total(m.get('frm_web')) >= 12 &&
          total(m.get('frm_off')) >= 2 &&
          total(m.get('frm_gone')) >= 2,
        context: () => refused.join('\n'),
      });
      // The unknown host: no frame's.
      expect([...counted.keys()].sort()).toEqual(['frm_gone', 'frm_off', 'frm_web']);
      const web = counted.get('frm_web') as FrameRequests;
      expect(web.status).toEqual({ '1xx': 1, '2xx': 7, '3xx': 1, '4xx': 2, '5xx': 1 });
      // Every answer but the WebSocket's has a latency; the slow one alone is past 200 ms, in
      // the bucket up to 500 ms.
      expect(web.latency.reduce((a, b) => a + b)).toBe(11);
      const slowBucket = LATENCY_BOUNDS_MS.findIndex((b) => b >= SLOW_MS);
      expect(LATENCY_BOUNDS_MS[slowBucket]).toBe(500);
      expect(web.latency[slowBucket]).toBe(1);
      expect(web.latency.slice(0, LATENCY_BOUNDS_MS.indexOf(200) + 1).reduce((a, b) => a + b)).toBe(
        10,
      );
      const off = counted.get('frm_off') as FrameRequests;
      expect(off.status).toEqual({ '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 2 });
      expect(off.latency.reduce((a, b) => a + b)).toBe(2);
      expect(counted.get('frm_gone')?.status['5xx']).toBe(2);

      // The edge's own failures, one line each; the app's own 500 is none.
      const stopped = 'at=error status=503 desc="the frame is stopped" method=GET path="/"';
      const refusedLine = (path: string) =>
        `at=error status=${refusedStatus} desc="the replica refused the connection" ` +
        `method=GET path="${path}"`;
      expect(lines.map(([f, l]) => [f, l.replace(/ service=\d+ms$/, '')])).toEqual([
        ['frm_off', stopped],
        ['frm_off', stopped],
        ['frm_gone', refusedLine('/a')],
        ['frm_gone', refusedLine('/b')],
      ]);
      // Taken: counting starts over.
      expect(edge.requests.take().size).toBe(0);
      expect(refused).toEqual([]);
    } finally {
      await edge.close();
    }
  });
});
