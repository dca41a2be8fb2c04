// The edge's pure parts: the routing table (host matching, what each frame state answers, who
// holds a host two frames claim, who is told of changes), its pages, and the headers it passes.
import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { normalizeHost, RoutingTable, type FrameRoute } from '../../src/runner/edge/table.ts';
import { page, rawPage } from '../../src/runner/edge/pages.ts';
import { ambiguity, downstreamHeaders, upstreamHeaders } from '../../src/runner/edge/headers.ts';

const up = (port: number) => ({ host: '127.0.0.1', port });
const route = (frameId: string, over: Partial<FrameRoute> = {}): FrameRoute => ({
  frameId,
  hosts: [`${frameId}.localhost`],
  state: 'running',
  upstreams: [up(4001)],
  ...over,
});

describe('host matching', () => {
  it.each([
    ['web.localhost', 'web.localhost'],
    ['WEB.LocalHost', 'web.localhost'],
    ['web.localhost:8000', 'web.localhost'],
    ['web.localhost.', 'web.localhost'],
    ['Web.Example.COM.:8443', 'web.example.com'],
    [' web.localhost ', 'web.localhost'],
    ['[::1]:8000', '[::1]'],
    ['127.0.0.1:8000', '127.0.0.1'],
    ['', undefined],
    [':8000', undefined],
    [undefined, undefined],
  ])('%j is %j', (raw, want) => expect(normalizeHost(raw)).toBe(want));
});

describe('the routing table', () => {
  it.each([
    ['running with healthy replicas', route('a'), { kind: 'upstreams', frameId: 'a' }],
    ['stopped', route('a', { state: 'stopped' }), { kind: 'page', page: 'stopped' }],
    ['suspended', route('a', { state: 'suspended' }), { kind: 'page', page: 'suspended' }],
    [
      'suspended, even with replicas left',
      route('a', { state: 'suspended', upstreams: [up(1)] }),
      { kind: 'page', page: 'suspended' },
    ],
    [
      'running with no healthy replica',
      route('a', { upstreams: [] }),
      { kind: 'page', page: 'starting' },
    ],
  ] as const)('a frame %s', (_what, r, want) => {
    const t = new RoutingTable();
    t.set(r);
    expect(t.resolve('a.localhost')).toMatchObject(want);
  });

  it('answers an unknown host, and no host at all, with the 404 page', () => {
    const t = new RoutingTable();
    t.set(route('a'));
    expect(t.resolve('b.localhost')).toEqual({ kind: 'page', page: 'unknown_host' });
    expect(t.resolve(undefined)).toEqual({ kind: 'page', page: 'unknown_host' });
  });

  it('routes every host of a frame, in any case, with a port or a trailing dot', () => {
    const t = new RoutingTable();
    t.set(route('a', { hosts: ['a-8f3k2q.localhost', 'Shop.Example.com'] }));
    for (const h of ['a-8f3k2q.localhost:8000', 'shop.example.com.', 'SHOP.EXAMPLE.COM:80'])
      expect(t.resolve(h)).toMatchObject({ kind: 'upstreams', frameId: 'a' });
  });

  it('keeps the upstreams in the order given', () => {
    const t = new RoutingTable();
    t.set(route('a', { upstreams: [up(3), up(1), up(2)] }));
    expect(t.resolve('a.localhost')).toMatchObject({ upstreams: [up(3), up(1), up(2)] });
  });

  it('lets go of a domain removed from a frame, and of every host of a frame removed', () => {
    const t = new RoutingTable();
    t.set(route('a', { hosts: ['a.localhost', 'shop.example.com'] }));
    t.set(route('a', { hosts: ['a.localhost'] }));
    expect(t.resolve('shop.example.com')).toMatchObject({ page: 'unknown_host' });
    t.remove('a');
    expect(t.resolve('a.localhost')).toMatchObject({ page: 'unknown_host' });
  });

  it('gives a host two frames claim to the first until it lets go, never back and forth', () => {
    const t = new RoutingTable();
    t.set(route('a', { hosts: ['shop.example.com'] }));
    t.set(route('b', { hosts: ['shop.example.com'] }));
    expect(t.resolve('shop.example.com')).toMatchObject({ frameId: 'a' });
    t.set(route('a', { hosts: ['shop.example.com'], upstreams: [up(9)] })); // a changes, keeps it
    expect(t.resolve('shop.example.com')).toMatchObject({ frameId: 'a' });
    t.set(route('a', { hosts: [] }));
    expect(t.resolve('shop.example.com')).toMatchObject({ frameId: 'b' });
  });

  it('tells its listeners of each change, and nothing of a route set again unchanged', () => {
    const t = new RoutingTable();
    const told: Array<[string, string | undefined, string | undefined]> = [];
    const stop = t.onChange((id, before, after) => told.push([id, before?.state, after?.state]));
    t.set(route('a'));
    t.set(route('a'));
    t.set(route('a', { state: 'stopped', upstreams: [] }));
    t.remove('a');
    stop();
    t.set(route('b'));
    expect(told).toEqual([
      ['a', undefined, 'running'],
      ['a', 'running', 'stopped'],
      ['a', 'stopped', undefined],
    ]);
  });

  it('is not changed by a caller changing the route it set', () => {
    const t = new RoutingTable();
    const r = route('a');
    t.set(r);
    (r.upstreams as unknown[]).length = 0;
    expect(t.resolve('a.localhost')).toMatchObject({ kind: 'upstreams' });
    expect(t.endpoints()).toEqual(new Set(['127.0.0.1:4001']));
  });

  it('finds a host among 10,000 routes', () => {
    const t = new RoutingTable();
    for (let i = 0; i < 10_000; i++) t.set(route(`f${i}`, { upstreams: [up(1000 + (i % 50000))] }));
    expect(t.resolve('f9999.localhost')).toMatchObject({ frameId: 'f9999' });
    expect(t.routes()).toHaveLength(10_000);
  });
});

describe('the pages', () => {
  it.each([
    ['unknown_host', 404, /No app is served/],
    ['stopped', 503, /stopped/],
    ['suspended', 503, /billing/],
    ['starting', 503, /starting/],
    ['bad_gateway', 502, /could not be reached/],
    ['bad_request', 400, /malformed or ambiguous/],
  ] as const)('%s answers %i, saying why', (kind, status, text) => {
    const p = page(kind, 'web.localhost');
    expect(p.status).toBe(status);
    expect(p.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(p.headers['cache-control']).toBe('no-store');
    expect(Number(p.headers['content-length'])).toBe(p.body.length);
    expect(p.body.toString()).toMatch(text);
    expect(p.body.length).toBeLessThan(1024);
    expect(p.headers['retry-after']).toBe(kind === 'starting' ? '5' : undefined);
  });

  it('escapes the host it names', () => {
    const body = page('unknown_host', '<script>x</script>').body.toString();
    expect(body).not.toContain('<script>');
    expect(body).toContain('&#60;script&#62;');
  });

  it('as raw bytes: a status line, its headers, connection close, then the page', () => {
    const raw = rawPage(page('stopped')).toString();
    expect(raw).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(raw).toMatch(/\r\nconnection: close\r\n\r\n<!doctype html>/);
  });
});

const message = (rawHeaders: string[], url = '/', remote = '10.9.8.7') =>
  ({
    rawHeaders,
    url,
    headers: Object.fromEntries(
      rawHeaders.flatMap((v, i) => (i % 2 === 0 ? [[v.toLowerCase(), rawHeaders[i + 1]]] : [])),
    ),
    socket: { remoteAddress: remote },
  }) as unknown as IncomingMessage;

describe('the headers the edge passes on', () => {
  it('drops hop-by-hop fields and those Connection names, and sets X-Forwarded-* itself', () => {
    const req = message([
      'Host',
      'web.localhost:8000',
      'Connection',
      'keep-alive, X-Secret',
      'Keep-Alive',
      'timeout=5',
      'X-Secret',
      'drop me',
      'TE',
      'trailers',
      'Proxy-Connection',
      'keep-alive',
      'X-Forwarded-For',
      '1.2.3.4',
      'x-forwarded-host',
      'evil.example',
      'X-Forwarded-Proto',
      'https',
      'Forwarded',
      'for=1.2.3.4',
      'Expect',
      '100-continue',
      'Accept',
      'text/html',
    ]);
    expect(upstreamHeaders(req, 'http')).toEqual([
      'Host',
      'web.localhost:8000',
      'Accept',
      'text/html',
      'x-forwarded-for',
      '10.9.8.7',
      'x-forwarded-proto',
      'http',
      'x-forwarded-host',
      'web.localhost:8000',
    ]);
  });

  it('never drops Host or Content-Length for being named in Connection', () => {
    const req = message([
      'Host',
      'a.localhost',
      'Content-Length',
      '3',
      'Connection',
      'host, content-length',
    ]);
    const out = upstreamHeaders(req, 'http');
    expect(out.slice(0, 4)).toEqual(['Host', 'a.localhost', 'Content-Length', '3']);
  });

  it("drops an upstream's hop-by-hop fields from its answer", () => {
    expect(
      downstreamHeaders({
        'content-type': 'text/plain',
        connection: 'keep-alive, x-internal',
        'keep-alive': 'timeout=5',
        'x-internal': 'yes',
        'transfer-encoding': 'chunked',
        'set-cookie': ['a=1', 'b=2'],
        upgrade: 'h2c',
        trailer: 'x-checksum',
      }),
    ).toEqual({ 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] });
  });

  it.each([
    [['Host', 'a.localhost', 'Host', 'b.localhost'], '/', 'more than one Host header'],
    [['Host', 'a.localhost', 'host', 'a.localhost'], '/', 'more than one Host header'],
    [['Host', 'a.localhost'], 'http://b.localhost/', 'a request target that is not a path'],
    [['Host', 'a.localhost'], '*', 'a request target that is not a path'],
    [['Host', 'a.localhost'], '/ok', undefined],
  ])('refuses an ambiguous request: %j %s', (raw, url, why) =>
    expect(ambiguity(message(raw, url))).toBe(why),
  );
});
