// HTTPS on the HAProxy plane, at the plane itself: a real haproxy given the edge's certificates
// through its Runtime API, from a certificate source of the test's own (the service's part is
// acme-suite.ts, with Pebble). A host's certificate is served once held, replaced in place on
// renewal (the same haproxy process, no reload), and gone with its host; plain HTTP redirects
// to HTTPS but for the ACME challenges, which the agent answers. All traffic goes to loopback.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CertificateSource, FetchedCertificate } from '../../src/runner/edge/certificates.ts';
import { startEdge, type Edge } from '../../src/runner/edge/edge.ts';
import type { FrameRoute } from '../../src/runner/edge/table.ts';
import { selfSigned } from '../helpers/tls.ts';
import { hit, until } from '../runner/fixture.ts';

let dir: string;
let edge: Edge;
let app: Server;
let appPort: number;
/** What the service would hand out now, by host; and the challenges it knows. */
const issued = new Map<string, FetchedCertificate>();
const challenges = new Map<string, string>();
const source: CertificateSource = {
  certificate: async (hostname) => {
    const c = issued.get(hostname);
    if (!c) throw new Error(`no certificate for ${hostname}`);
    return c;
  },
  challenge: async (token) => challenges.get(token),
};

function issue(host: string, serial: string) {
  const made = selfSigned(dir, `${host}-${serial}`, serial, [host]);
  issued.set(host, {
    hostname: host,
    certificate: made.cert,
    private_key: made.key,
    fingerprint: serial,
  });
}

/** The certificate the plane shows for an SNI name; an error where it makes no handshake. */
function peer(host: string): Promise<PeerCertificate | { error: string }> {
  return new Promise((done) => {
    const s = connect({
      host: '127.0.0.1',
      port: edge.info!.https_port!,
      servername: host,
      rejectUnauthorized: false,
    });
    s.once('secureConnect', () => {
      done(s.getPeerCertificate());
      s.destroy();
    });
    s.once('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
  });
}
const subjectOf = async (host: string) => {
  const p = await peer(host);
  return 'error' in p ? p : p.subject?.CN;
};
const pid = () => Number(readFileSync(join(dir, 'edge', 'haproxy.pid'), 'utf8'));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fp-haproxy-tls-'));
  app = createServer((_req, res) => res.end('app'));
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
  appPort = (app.address() as { port: number }).port;
  edge = await startEdge({
    port: 0,
    plane: 'haproxy',
    dir: join(dir, 'edge'),
    slots: 10,
    https: {
      port: 0,
      source,
      log: pino({ level: 'silent' }),
    },
  });
});
afterAll(async () => {
  await edge?.close();
  app?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('serves a host its certificate, renews it in place, and drops it with its host', async () => {
  const upstreams = [{ host: '127.0.0.1', port: appPort }];
  edge.routes.set({
    frameId: 'f',
    hosts: ['f.example.test'],
    state: 'running',
    upstreams,
  } as FrameRoute);
  const started = pid();
  expect(await peer('f.example.test')).toHaveProperty('error');
  issue('f.example.test', 'one');
  await edge.certificates!.follow(new Map([['f.example.test', 'one']]));
  await until('the first certificate', async () => (await subjectOf('f.example.test')) === 'one');
  // Over HTTPS, the app; over HTTP, a redirect there, path and query kept.
  const plain = await hit(edge.info!.http_port, '/a?b=1', 'F.example.test:8080');
  expect(plain).toMatchObject({
    status: 308,
    headers: { location: `https://f.example.test:${edge.info!.https_port}/a?b=1` },
  });
  // The ACME server's challenge is answered by the agent, over plain HTTP.
  challenges.set('tok-1', 'tok-1.thumbprint');
  const answer = await hit(edge.info!.http_port, '/.well-known/acme-challenge/tok-1', 'x.test');
  expect(answer).toMatchObject({ status: 200, body: 'tok-1.thumbprint' });
  const unknown = await hit(edge.info!.http_port, '/.well-known/acme-challenge/nope', 'x.test');
  expect(unknown).toMatchObject({ status: 404 });
  // Another name gets no handshake.
  expect(await peer('g.example.test')).toHaveProperty('error');

  issue('f.example.test', 'two');
  await edge.certificates!.follow(new Map([['f.example.test', 'two']]));
  await until('the renewed certificate', async () => (await subjectOf('f.example.test')) === 'two');
  expect(pid()).toBe(started);

  await edge.certificates!.follow(new Map());
  await until('no certificate', async () => 'error' in (await peer('f.example.test')));
  const after = await hit(edge.info!.http_port, '/', 'f.example.test');
  expect(after).toMatchObject({ status: 200, body: 'app' });
});
