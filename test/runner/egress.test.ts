// The egress of builds (src/runner/egress-policy.ts, egress.ts): only public unicast addresses,
// or what the operator allows; the proxy decides before it connects, and connects to the address
// it checked. No test traffic leaves loopback: refused destinations are names that a resolver of
// the test's own maps to private addresses, and the test shows that no connection was opened.
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createServer, request, type Server as HttpServer } from 'node:http';
import { connect, createServer as createNetServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllow, refusal } from '../../src/runner/egress-policy.ts';
import { startEgressProxy } from '../../src/runner/egress.ts';

describe('which addresses a build may reach', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.17.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['2002:7f00:1::', '6to4'],
    ['64:ff9b::a00:1', 'rfc6052'],
  ])('refuses %s (%s)', (address, range) => {
    expect(refusal(address, 443, [])).toBe(`${address} is a ${range} address`);
  });

  it.each(['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111'])('allows %s', (address) => {
    expect(refusal(address, 443, [])).toBeUndefined();
  });

  it('lets the operator allow an address, a range, or one port of them', () => {
    const allow = parseAllow('127.0.0.1:4873, 10.0.0.0/8, [fd00::1]:80');
    expect(refusal('127.0.0.1', 4873, allow)).toBeUndefined();
    expect(refusal('127.0.0.1', 4874, allow)).toMatch(/loopback/);
    expect(refusal('10.9.8.7', 22, allow)).toBeUndefined();
    expect(refusal('::ffff:10.9.8.7', 22, allow)).toBeUndefined();
    expect(refusal('fd00::1', 80, allow)).toBeUndefined();
    expect(refusal('fd00::1', 81, allow)).toMatch(/uniqueLocal/);
    expect(() => parseAllow('10.0.0.0/33')).toThrow(/cannot read "10.0.0.0\/33"/);
    expect(() => parseAllow('example.com')).toThrow(/cannot read/);
    expect(parseAllow(undefined)).toEqual([]);
  });

  it('refuses every address of the private, loopback and link-local IPv4 ranges', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const inRange = fc.oneof(
      fc.tuple(octet, octet, octet).map(([a, b, c]) => `10.${a}.${b}.${c}`),
      fc
        .tuple(fc.integer({ min: 16, max: 31 }), octet, octet)
        .map(([a, b, c]) => `172.${a}.${b}.${c}`),
      fc.tuple(octet, octet).map(([a, b]) => `192.168.${a}.${b}`),
      fc.tuple(octet, octet, octet).map(([a, b, c]) => `127.${a}.${b}.${c}`),
      fc.tuple(octet, octet).map(([a, b]) => `169.254.${a}.${b}`),
    );
    fc.assert(
      fc.property(inRange, fc.integer({ min: 1, max: 65535 }), (address, port) => {
        expect(refusal(address, port, [])).toBeDefined();
        expect(refusal(`::ffff:${address}`, port, [])).toBeDefined();
      }),
    );
  });
});

const closers: Array<() => void> = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** A proxy on a Unix socket whose resolver maps test names, and which records every connection. */
async function proxy(names: Record<string, string[]>, allow = '') {
  const dir = mkdtempSync(join(tmpdir(), 'fp-egress-'));
  const opened: string[] = [];
  const server = await startEgressProxy({
    socketPath: join(dir, 'proxy.sock'),
    allow: parseAllow(allow),
    lookup: async (host) => names[host] ?? [host],
    connect: (address, port) => {
      opened.push(`${address}:${port}`);
      return connect({ host: address, port });
    },
  });
  closers.push(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { path: join(dir, 'proxy.sock'), opened };
}

/** A loopback listener that counts connections and answers each with a line. */
async function listener(): Promise<{ port: number; accepted: () => number }> {
  let accepted = 0;
  const server: Server = createNetServer((s) => {
    accepted++;
    s.end('hello from the test listener\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => server.close());
  return { port: (server.address() as { port: number }).port, accepted: () => accepted };
}

/** CONNECT through the proxy; the status line and what the tunnel then carries. */
function tunnel(path: string, target: string): Promise<{ status: string; data: string }> {
  return new Promise((resolve, reject) => {
    const s: Socket = connect({ path });
    let data = '';
    s.on('connect', () => s.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    s.on('data', (d) => (data += d.toString()));
    s.on('close', () => resolve({ status: data.split('\r\n')[0] ?? '', data }));
    s.on('error', reject);
    setTimeout(() => s.end(), 500);
  });
}

describe('the egress proxy', () => {
  it('refuses names that resolve to this machine or a private network, before connecting', async () => {
    const target = await listener();
    const p = await proxy({
      'registry.test': ['10.20.30.40'],
      'metadata.test': ['169.254.169.254'],
      'mixed.test': ['93.184.216.34', '127.0.0.1'],
      'rebind.test': ['127.0.0.1'],
    });
    for (const host of [
      'registry.test',
      'metadata.test',
      'mixed.test',
      'rebind.test',
      '127.0.0.1',
    ]) {
      const r = await tunnel(p.path, `${host}:${target.port}`);
      expect(r.status, host).toBe('HTTP/1.1 403 Forbidden');
      expect(r.data).toMatch(/Frameplane refused/);
    }
    expect(p.opened).toEqual([]);
    expect(target.accepted()).toBe(0);
  });

  it('tunnels to what the operator allows, connecting to the address it checked', async () => {
    const target = await listener();
    const p = await proxy({ 'mirror.test': ['127.0.0.1'] }, `127.0.0.1:${target.port}`);
    const r = await tunnel(p.path, `mirror.test:${target.port}`);
    expect(r.status).toBe('HTTP/1.1 200 Connection Established');
    expect(r.data).toMatch(/hello from the test listener/);
    expect(p.opened).toEqual([`127.0.0.1:${target.port}`]);
  });

  it('forwards plain HTTP to an allowed address and refuses it elsewhere', async () => {
    const web: HttpServer = createServer((req, res) => res.end(`got ${req.url}`));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
    closers.push(() => web.close());
    const port = (web.address() as { port: number }).port;
    const p = await proxy({ 'mirror.test': ['127.0.0.1'] }, `127.0.0.1:${port}`);
    const get = (url: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ socketPath: p.path, path: url, headers: { host: 'x' } }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get(`http://mirror.test:${port}/pkg?x=1`)).toEqual({
      status: 200,
      body: 'got /pkg?x=1',
    });
    const refused = await get(`http://mirror.test:${port + 1}/`);
    expect(refused.status).toBe(403);
    expect(p.opened).toEqual([`127.0.0.1:${port}`]);
  });
});
