// The built-in edge with real upstreams on loopback and on a Unix socket: routing by Host, its
// pages, X-Forwarded-* (a client's own values replaced), a 10 MB upload and a streamed answer
// passing without being held, a WebSocket that outlives another frame's route changes, a
// replica refusing connections skipped, and ambiguous or slow requests refused before any
// replica sees them. All traffic goes to loopback, with the frame's hostname as Host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { startEdge, type Edge } from '../../src/runner/edge/edge.ts';
import type { FrameRoute } from '../../src/runner/edge/table.ts';
import { freePort } from '../../src/runner/processes.ts';
import { waitFor } from '../helpers/wait.ts';
import { hitFrame, isEdgePage } from './fixture.ts';

let edge: Edge;
let port: number;
let tmp: string;
let loop: Server; // frame a, on loopback
let unix: Server; // frame b, behind a Unix socket
let loopPort: number;
let socketPath: string;
let seen = 0; // requests that reached frame a
let release: () => void = () => {};
const closers: Array<() => unknown> = [];

const body = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c)).on('end', () => resolve(Buffer.concat(parts)));
  });

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'fp-edge-'));
  loop = createServer(async (req, res) => {
    seen++;
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      await new Promise<void>((r) => {
        release = r;
      });
      return res.end('data: two\n\n');
    }
    const data = await body(req);
    res.setHeader('content-type', 'application/json');
    res.setHeader('connection', 'keep-alive, x-hop');
    res.setHeader('x-hop', 'must not pass');
    res.end(
      JSON.stringify({
        frame: 'a',
        method: req.method,
        url: req.url,
        headers: req.headers,
        bytes: data.length,
        sha: createHash('sha256').update(data).digest('hex'),
        clientPort: req.socket.remotePort,
      }),
    );
  });
  const wss = new WebSocketServer({ server: loop });
  wss.on('connection', (ws) => ws.on('message', (m) => ws.send(`echo ${m}`)));
  await new Promise<void>((r) => loop.listen(0, '127.0.0.1', r));
  loopPort = (loop.address() as AddressInfo).port;
  socketPath = join(tmp, 'b.sock');
  unix = createServer((_req, res) => res.end('frame b, by its socket'));
  await new Promise<void>((r) => unix.listen(socketPath, r));
  closers.push(() => wss.close());

  edge = await startEdge({ port: 0, headersTimeoutMs: 1000, requestTimeoutMs: 20_000 });
  port = edge.info!.http_port;
  set({ frameId: 'a', hosts: ['a.localhost'], upstreams: [{ host: '127.0.0.1', port: loopPort }] });
  set({
    frameId: 'b',
    hosts: ['b.localhost', 'shop.example.test'],
    upstreams: [{ path: socketPath }],
  });
});

afterAll(async () => {
  release();
  for (const c of closers.reverse()) await c();
  await edge?.close();
  loop?.closeAllConnections();
  await new Promise((r) => loop?.close(r));
  await new Promise((r) => unix?.close(r));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function set(r: Partial<FrameRoute> & { frameId: string }) {
  edge.routes.set({ hosts: [`${r.frameId}.localhost`], state: 'running', upstreams: [], ...r });
}

/** A request through the edge with this Host and body; answers status, headers and body. */
function send(
  host: string,
  o: { method?: string; path?: string; headers?: Record<string, string>; body?: Buffer[] } = {},
  agent: Agent | false = false,
) {
  return new Promise<{
    status: number;
    headers: IncomingMessage['headers'];
    text: string;
    localPort?: number;
  }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: o.method ?? 'GET',
        path: o.path ?? '/',
        agent,
        headers: { host, ...o.headers },
      },
      async (res) =>
        resolve({
          status: res.statusCode!,
          headers: res.headers,
          localPort: res.socket.localPort,
          text: (await body(res)).toString(),
        }),
    );
    req.on('error', reject);
    for (const part of o.body ?? []) req.write(part);
    req.end();
  });
}

/** Raw bytes to the edge; answers all it said until it closed the connection. */
function raw(bytes: string, waitMs = 3000) {
  return new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('close', () => resolve(got));
    s.on('error', () => resolve(got));
    s.setTimeout(waitMs, () => s.destroy());
    s.write(bytes);
  });
}

describe('the edge routes by Host', () => {
  it('to a replica on loopback and to one behind a Unix socket; an unknown host: 404', async () => {
    const a = await send('a.localhost');
    expect(a.status).toBe(200);
    expect(JSON.parse(a.text)).toMatchObject({ frame: 'a', url: '/' });
    expect(await send('B.LOCALHOST:8000')).toMatchObject({
      status: 200,
      text: 'frame b, by its socket',
    });
    expect(await send('shop.example.test.')).toMatchObject({ text: 'frame b, by its socket' });
    const unknown = await send('c.localhost');
    expect(unknown.status).toBe(404);
    expect(unknown.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(unknown.text).toMatch(/No app is served/);
  });

  it('answers its own pages for stopped, suspended and starting frames', async () => {
    set({ frameId: 's', state: 'stopped' });
    set({ frameId: 'p', state: 'suspended' });
    set({ frameId: 'w', upstreams: [] });
    const stopped = await hitFrame(port, 's.localhost');
    expect(stopped).toMatchObject({ status: 503, body: expect.stringMatching(/stopped/) });
    expect(isEdgePage(stopped, 'stopped')).toBe(true);
    expect(await hitFrame(port, 'p.localhost')).toMatchObject({
      status: 503,
      body: expect.stringMatching(/billing/),
    });
    const starting = await hitFrame(port, 'w.localhost');
    expect(starting).toMatchObject({ status: 503, headers: { 'retry-after': '5' } });
    expect(isEdgePage(starting, 'starting')).toBe(true);
  });

  it('sets X-Forwarded-For, -Proto and -Host, replacing what the client sent', async () => {
    const r = await send('a.localhost', {
      headers: {
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'bank.example',
        forwarded: 'for=203.0.113.9',
        connection: 'x-secret',
        'x-secret': 'hop',
      },
    });
    const seenHeaders = JSON.parse(r.text).headers;
    expect(seenHeaders).toMatchObject({
      host: 'a.localhost',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'a.localhost',
    });
    expect(seenHeaders).not.toHaveProperty('forwarded');
    expect(seenHeaders).not.toHaveProperty('x-secret');
    // The replica's own hop-by-hop fields stay on its side too.
    expect(r.headers).not.toHaveProperty('x-hop');
  });
});

describe('bodies pass through without being held', () => {
  it('a 10 MB upload, with a length and chunked', async () => {
    const data = randomBytes(10 * 1024 * 1024);
    const sha = createHash('sha256').update(data).digest('hex');
    const sized = await send('a.localhost', {
      method: 'POST',
      headers: { 'content-length': String(data.length) },
      body: [data],
    });
    expect(JSON.parse(sized.text)).toMatchObject({ bytes: data.length, sha });
    const parts = Array.from({ length: 10 }, (_, i) =>
      data.subarray(i * 1048576, (i + 1) * 1048576),
    );
    const chunked = await send('a.localhost', { method: 'PUT', body: parts });
    expect(JSON.parse(chunked.text)).toMatchObject({ bytes: data.length, sha });
  });

  it('a streamed answer: its first event arrives while the replica holds the rest', async () => {
    const events: string[] = [];
    const done = new Promise<number>((resolve) => {
      request(
        {
          host: '127.0.0.1',
          port,
          path: '/stream',
          agent: false,
          headers: { host: 'a.localhost' },
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            events.push(c);
            if (c.includes('one')) release();
          });
          res.on('end', () => resolve(res.statusCode!));
        },
      ).end();
    });
    expect(await done).toBe(200);
    expect(events.join('')).toBe('data: one\n\ndata: two\n\n');
  });
});

describe('long-lived connections', () => {
  it('a WebSocket and a keep-alive connection outlive route changes of another frame', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/chat`, { headers: { host: 'a.localhost' } });
    const said: string[] = [];
    ws.on('message', (m) => said.push(m.toString()));
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const talk = async (text: string) => {
      ws.send(text);
      await waitFor(`the echo of ${text}`, () => said.includes(`echo ${text}`), {
        timeoutMs: 3000,
        everyMs: 10,
      });
      return said.includes(`echo ${text}`);
    };
    expect(await talk('before')).toBe(true);
    const keep = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await send('a.localhost', {}, keep);

    // Frame b is deployed, stopped, given a domain, removed and added back.
    set({
      frameId: 'b',
      hosts: ['b.localhost'],
      upstreams: [{ path: socketPath }, { path: socketPath }],
    });
    set({ frameId: 'b', hosts: ['b.localhost'], state: 'stopped' });
    set({
      frameId: 'b',
      hosts: ['b.localhost', 'new.example.test'],
      upstreams: [{ path: socketPath }],
    });
    edge.routes.remove('b');
    set({
      frameId: 'b',
      hosts: ['b.localhost', 'shop.example.test'],
      upstreams: [{ path: socketPath }],
    });
    // A fixed time on purpose: the edge prunes unused pools 1 s after a route change, with no
    // outward sign; the connections must outlive that.
    await new Promise((r) => setTimeout(r, 1500));

    expect(await talk('after')).toBe(true);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    // Frame a's keep-alive connection to the edge is the same one, and so is the edge's to a.
    const again = await send('a.localhost', {}, keep);
    expect(again.localPort).toBe(first.localPort);
    expect(JSON.parse(again.text).clientPort).toBe(JSON.parse(first.text).clientPort);
    ws.close();
    keep.destroy();
  });

  it("a WebSocket that the app does not take gets the app's own answer", async () => {
    set({ frameId: 'n', upstreams: [{ path: socketPath }] }); // speaks HTTP, not WebSocket
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: 'n.localhost' } });
    const answer = await new Promise<{ status: number; text: string }>((r) =>
      ws.once('unexpected-response', async (_req, res) =>
        r({ status: res.statusCode!, text: (await body(res)).toString() }),
      ),
    );
    expect(answer).toEqual({ status: 200, text: 'frame b, by its socket' });
  });

  it('a WebSocket to an unknown host gets the 404 page', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: 'nobody.localhost' } });
    const status = await new Promise<number>((r) =>
      ws.once('unexpected-response', (_req, res) => r(res.statusCode!)),
    );
    expect(status).toBe(404);
  });
});

describe('replicas that go away', () => {
  it('a replica refusing connections is skipped: no request fails, bodies included', async () => {
    const gone = await freePort(); // nothing listens there any more
    set({
      frameId: 'r',
      upstreams: [
        { host: '127.0.0.1', port: gone },
        { path: join(tmp, 'missing.sock') },
        { host: '127.0.0.1', port: loopPort },
      ],
    });
    for (let i = 0; i < 6; i++) {
      expect((await send('r.localhost')).status).toBe(200);
      const post = await send('r.localhost', { method: 'POST', body: [Buffer.from('hello')] });
      expect(JSON.parse(post.text)).toMatchObject({ bytes: 5 });
    }
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { host: 'r.localhost' } });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    ws.close();
  });

  it('when none takes it, the 502 page', async () => {
    set({ frameId: 'z', upstreams: [{ host: '127.0.0.1', port: await freePort() }] });
    const r = await hitFrame(port, 'z.localhost');
    expect(r).toMatchObject({ status: 502 });
    expect(isEdgePage(r, 'bad_gateway')).toBe(true);
  });
});

describe('requests refused before any replica sees them', () => {
  const before = () => seen;
  it.each([
    [
      'Content-Length beside Transfer-Encoding',
      'POST / HTTP/1.1\r\nHost: a.localhost\r\nContent-Length: 5\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'two differing Content-Lengths',
      'POST / HTTP/1.1\r\nHost: a.localhost\r\nContent-Length: 5\r\n' +
        'Content-Length: 6\r\n\r\nhello!',
    ],
    ['two Host headers', 'GET / HTTP/1.1\r\nHost: a.localhost\r\nHost: b.localhost\r\n\r\n'],
    ['an absolute target', 'GET http://b.localhost/ HTTP/1.1\r\nHost: a.localhost\r\n\r\n'],
    ['no Host in HTTP/1.1', 'GET / HTTP/1.1\r\n\r\n'],
    ['a bare LF in a header', 'GET / HTTP/1.1\r\nHost: a.localhost\nX: y\r\n\r\n'],
  ])('%s: 400', async (_what, bytes) => {
    const count = before();
    const answer = await raw(bytes);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(seen).toBe(count);
  });

  it('headers larger than the limit: 431', async () => {
    const answer = await raw(
      `GET / HTTP/1.1\r\nHost: a.localhost\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
  });

  it('a client too slow to send its headers is cut off (408)', { timeout: 10_000 }, async () => {
    const started = Date.now();
    const answer = await raw('GET / HTTP/1.1\r\nHost: a.lo', 8000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('bodies larger than the limit', () => {
  it('413 before a replica sees a declared one; a chunked one is cut off there', async () => {
    const small = await startEdge({ port: 0, maxBodyBytes: 1024 * 1024 });
    closers.push(() => small.close());
    small.routes.set({
      frameId: 'a',
      hosts: ['a.localhost'],
      state: 'running',
      upstreams: [{ host: '127.0.0.1', port: loopPort }],
    });
    const to = (bytes: number, headers: Record<string, string>) =>
      new Promise<{ status: number; kind: unknown; text: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: small.info!.http_port,
            method: 'POST',
            agent: false,
            headers: { host: 'a.localhost', ...headers },
          },
          async (res) =>
            resolve({
              status: res.statusCode!,
              kind: res.headers['x-frameplane-edge'],
              text: (await body(res)).toString(),
            }),
        );
        req.on('error', reject);
        req.end(Buffer.alloc(bytes, 1));
      });
    const count = seen;
    const declared = await to(2 * 1024 * 1024, { 'content-length': String(2 * 1024 * 1024) });
    expect(declared).toMatchObject({ status: 413, kind: 'too_large' });
    expect(seen).toBe(count);
    const chunked = await to(2 * 1024 * 1024, { 'transfer-encoding': 'chunked' });
    expect(chunked).toMatchObject({ status: 413, kind: 'too_large' });
    // At the limit, it passes whole.
    const limit = await to(1024 * 1024, { 'transfer-encoding': 'chunked' });
    expect(limit.status).toBe(200);
    expect(JSON.parse(limit.text)).toMatchObject({ bytes: 1024 * 1024 });
  });
});

describe('an agent without an edge port', () => {
  it('keeps the routes, serves nothing, and tells the service it has no edge', async () => {
    const none = await startEdge({});
    expect(none.info).toBeNull();
    none.routes.set({ frameId: 'q', hosts: ['q.localhost'], state: 'running', upstreams: [] });
    expect(none.table.resolve('q.localhost')).toMatchObject({ kind: 'page', page: 'starting' });
    await none.routes.drain([{ host: '127.0.0.1', port: 1 }]); // nothing in flight, at once
    await none.close();
  });
});
