// One try, at the connection: every address a name resolves to is checked before any socket
// is opened (Node's `net.client.socket` channel counts the sockets this file opens; it opens
// no other), and the connection goes to the address that was checked, resolved once. Private
// and public addresses appear here only as answers of the test's own resolver or as literals
// that are refused: no packet leaves loopback.
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXCERPT_BYTES, post, type Resolved } from '../../src/notifications/send.ts';

let sockets = 0;
const count = () => {
  sockets++;
};
let server: http.Server;
let port = 0;
let answer: (res: http.ServerResponse) => void = (res) => res.end('ok');
const hosts: string[] = [];

beforeAll(async () => {
  diagnostics.subscribe('net.client.socket', count);
  server = http.createServer((req, res) => {
    hosts.push(String(req.headers.host));
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  diagnostics.unsubscribe('net.client.socket', count);
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  answer = (res) => res.end('ok');
  hosts.length = 0;
});

/** A resolver of the test's own: each name's answers, in turn; counts its questions. */
function table(names: Record<string, string[][]>) {
  const asked: string[] = [];
  const resolve = async (name: string): Promise<Resolved[]> => {
    asked.push(name);
    const answers = names[name];
    const next = answers?.length === 1 ? answers[0] : answers?.shift();
    if (!next) throw Object.assign(new Error(`no such name ${name}`), { code: 'ENOTFOUND' });
    return next.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { asked, resolve };
}

const strict = { allowPrivate: false, allowHttp: true, timeoutMs: 2000 };
const body = JSON.stringify({ type: 'ping' });

describe('a try', () => {
  it.each([
    ['http://10.0.0.1/hook', /10\.0\.0\.1 is a private address/],
    ['http://192.168.0.10:8080/hook', /a private address/],
    ['http://169.254.169.254/latest/meta-data', /a link-local address/],
    ['http://[fd00::1]/hook', /unique local/],
    ['http://[::ffff:10.0.0.1]/hook', /\(10\.0\.0\.1\) is a private address/],
    ['http://127.0.0.1:9/hook', /loopback/],
  ])('to %s is refused without a connection', async (url, why) => {
    const dns = table({});
    const before = sockets;
    const o = await post(url, {}, body, { ...strict, resolve: dns.resolve });
    expect(o).toMatchObject({ ok: false, statusCode: null, excerpt: null });
    expect(o.error).toMatch(/^Refused: /);
    expect(o.error).toMatch(why);
    expect(dns.asked).toEqual([]);
    expect(sockets).toBe(before);
  });

  it.each([
    ['one private answer', ['10.9.8.7']],
    ['a public and a loopback answer', ['93.184.216.34', '127.0.0.1']],
    ['a link-local IPv6 answer', ['fe80::1']],
    ['an IPv4-mapped loopback answer', ['::ffff:127.0.0.1']],
  ])('to a name with %s is refused after resolving, without a connection', async (_, answers) => {
    const dns = table({ 'hooks.example.test': [answers] });
    const before = sockets;
    const o = await post('http://hooks.example.test/x', {}, body, {
      ...strict,
      resolve: dns.resolve,
    });
    expect(o.error).toMatch(/^Refused: hooks\.example\.test resolves to /);
    expect(dns.asked).toEqual(['hooks.example.test']);
    expect(sockets).toBe(before);
  });

  it('connects to the address it checked, resolving the name once (no rebinding)', async () => {
    // The name answers loopback first and another address after: only the first is used.
    const dns = table({ 'rebind.test': [['127.0.0.1'], ['127.0.0.2']] });
    const before = sockets;
    const o = await post(`http://rebind.test:${port}/x`, {}, body, {
      ...strict,
      allowPrivate: true,
      resolve: dns.resolve,
    });
    expect(o).toMatchObject({ ok: true, statusCode: 200, excerpt: 'ok', error: null });
    expect(dns.asked).toEqual(['rebind.test']);
    expect(sockets).toBe(before + 1);
    expect(hosts).toEqual([`rebind.test:${port}`]);
  });

  it('refuses plain http unless allowed, and an unknown name', async () => {
    const dns = table({});
    const https = await post(`http://127.0.0.1:${port}/`, {}, body, {
      ...strict,
      allowPrivate: true,
      allowHttp: false,
      resolve: dns.resolve,
    });
    expect(https.error).toMatch(/https:\/\/ URL/);
    const unknown = await post('https://nowhere.test/', {}, body, { ...strict, ...dns });
    expect(unknown.error).toBe('DNS: nowhere.test did not resolve (ENOTFOUND)');
  });

  const loopback = { ...strict, allowPrivate: true, resolve: table({}).resolve };

  it('fails on an answer other than 2xx, redirects included, keeping 1 KiB of it', async () => {
    answer = (res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/' });
      res.end('é'.repeat(2000));
    };
    const o = await post(`http://127.0.0.1:${port}/`, {}, body, loopback);
    expect(o).toMatchObject({ ok: false, statusCode: 302 });
    expect(o.error).toBe('The receiver answered 302, not a 2xx');
    expect(Buffer.byteLength(o.excerpt ?? '')).toBe(EXCERPT_BYTES);
    expect(hosts).toHaveLength(1); // not followed
  });

  it('gives up on a receiver that does not answer in time', async () => {
    answer = () => {}; // never
    const o = await post(`http://127.0.0.1:${port}/`, {}, body, { ...loopback, timeoutMs: 200 });
    expect(o).toMatchObject({ ok: false, statusCode: null });
    expect(o.error).toBe('No complete answer within 0.2 s');
    expect(o.latencyMs).toBeGreaterThanOrEqual(190);
  });

  it('says when the connection is refused', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const free = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const o = await post(`http://127.0.0.1:${free}/`, {}, body, loopback);
    expect(o.error).toBe(`Connection refused by 127.0.0.1:${free}`);
  });
});
