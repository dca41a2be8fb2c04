// The built-in edge with HTTPS (CONTRACT 5b), its certificates from a source standing for the
// service (the service's side, and a real ACME server, are in test/certificates/ and
// test/edge/acme.test.ts): a handshake only for a name it holds a certificate for, the
// certificate fetched again when its fingerprint changes and dropped when the desired state no
// longer names it, plain HTTP redirected to HTTPS but for the challenge path, which the service
// answers, and challenge look-ups bounded. All traffic goes to loopback.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEdge, type Edge } from '../../src/runner/edge/edge.ts';
import type { FetchedCertificate } from '../../src/runner/edge/certificates.ts';
import { MAX_CHALLENGE_LOOKUPS } from '../../src/runner/edge/acme-answers.ts';
import { agentLogger } from '../../src/runner/log.ts';
import { selfSigned } from '../helpers/tls.ts';
import { waitFor } from '../helpers/wait.ts';
import { hit } from './fixture.ts';

const HOST = 'web-abc123.apps.example.test';
let tmp: string;
let app: Server;
let edge: Edge;
let httpPort: number;
let httpsPort: number;
/** What the "service" holds: a certificate per name, and challenges. */
const certs = new Map<string, FetchedCertificate>();
const challenges = new Map<string, string>();
let fetched: string[] = [];
let hold: Promise<void> | undefined;
/** Challenge look-ups the service is holding now (waiting for `hold`). */
let held = 0;

/** A self-signed certificate for `name`; `fingerprint` stands for its SHA-256. */
function certificateOf(name: string, fingerprint: string): FetchedCertificate {
  const c = selfSigned(tmp, fingerprint, fingerprint, [name]);
  return { hostname: name, certificate: c.cert, private_key: c.key, fingerprint };
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'fp-edge-tls-'));
  app = createServer((req, res) =>
    res.end(JSON.stringify({ proto: req.headers['x-forwarded-proto'], url: req.url })),
  );
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
  const source = {
    async certificate(hostname: string) {
      fetched.push(hostname);
      const c = certs.get(hostname);
      if (!c) throw new Error('404');
      return c;
    },
    async challenge(token: string) {
      if (hold) {
        held++;
        await hold;
        held--;
      }
      return challenges.get(token);
    },
  };
  edge = await startEdge({
    port: 0,
    https: { port: 0, source, log: agentLogger() },
  });
  httpPort = edge.info!.http_port;
  httpsPort = edge.info!.https_port!;
  edge.routes.set({
    frameId: 'frm_a',
    hosts: [HOST],
    state: 'running',
    upstreams: [{ host: '127.0.0.1', port: (app.address() as AddressInfo).port }],
  });
});
afterAll(async () => {
  await edge?.close();
  app?.close();
  rmSync(tmp, { recursive: true, force: true });
});

type Answer = { status: number; body: string; subject: string } | { error: string };
function httpsGet(name: string, path = '/'): Promise<Answer> {
  return new Promise((done) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: httpsPort,
        path,
        servername: name,
        headers: { host: name },
        rejectUnauthorized: false, // self-signed: the subject says which one was served
        agent: false, // a new handshake each time: a renewed certificate serves new connections
      },
      (res) => {
        const subject = (res.socket as TLSSocket).getPeerCertificate().subject.CN as string;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => done({ status: res.statusCode!, body, subject }));
      },
    );
    req.setTimeout(3000, () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    req.end();
  });
}

it('tells the service its HTTPS port', () => {
  expect(edge.info).toEqual({ http_port: httpPort, https_port: expect.any(Number) });
  expect(httpsPort).not.toBe(httpPort);
});

it('without a certificate: no handshake, and plain HTTP serves the frame', async () => {
  expect(await httpsGet(HOST)).toHaveProperty('error');
  const plain = await hit(httpPort, '/x', HOST);
  expect(plain).toMatchObject({ status: 200 });
  expect(JSON.parse((plain as { body: string }).body)).toEqual({ proto: 'http', url: '/x' });
});

it('serves the certificate the desired state names, and redirects plain HTTP to it', async () => {
  certs.set(HOST, certificateOf(HOST, 'first'));
  await edge.certificates!.follow(new Map([[HOST, 'first']]));
  const secure = await httpsGet(HOST, '/y?z=1');
  expect(secure).toMatchObject({ status: 200, subject: 'first' });
  expect(JSON.parse((secure as { body: string }).body)).toEqual({ proto: 'https', url: '/y?z=1' });
  expect(await hit(httpPort, '/y?z=1', `${HOST.toUpperCase()}:80`)).toMatchObject({
    status: 308,
    headers: { location: `https://${HOST}:${httpsPort}/y?z=1` },
  });
  // Another name: no handshake (SNI), and plain HTTP goes on as before (404 here).
  expect(await httpsGet('other.apps.example.test')).toHaveProperty('error');
  expect(await hit(httpPort, '/', 'other.apps.example.test')).toMatchObject({ status: 404 });
});

it('fetches a certificate only when its fingerprint changes, and drops one no longer named', async () => {
  fetched = [];
  await edge.certificates!.follow(new Map([[HOST, 'first']]));
  expect(fetched).toEqual([]);
  certs.set(HOST, certificateOf(HOST, 'renewed'));
  await edge.certificates!.follow(new Map([[HOST, 'renewed']]));
  expect(fetched).toEqual([HOST]);
  expect(await httpsGet(HOST)).toMatchObject({ status: 200, subject: 'renewed' });
  await edge.certificates!.follow(new Map());
  expect(await httpsGet(HOST)).toHaveProperty('error');
  expect(await hit(httpPort, '/', HOST)).toMatchObject({ status: 200 });
});

it('answers the challenge path from the service, never redirected, and bounds the look-ups', async () => {
  await edge.certificates!.follow(new Map([[HOST, 'renewed']]));
  challenges.set('tok-1', 'tok-1.thumb');
  const path = (t: string) => `/.well-known/acme-challenge/${t}`;
  expect(await hit(httpPort, path('tok-1'), HOST)).toMatchObject({
    status: 200,
    body: 'tok-1.thumb',
  });
  expect(await hit(httpPort, path('nope'), HOST)).toMatchObject({ status: 404 });
  expect(await hit(httpPort, path('bad.token'), HOST)).toMatchObject({ status: 404 });
  // The service is slow: beyond MAX_CHALLENGE_LOOKUPS at once, the edge answers 503 itself.
  let open!: () => void;
  hold = new Promise((r) => {
    open = r;
  });
  const answered: number[] = [];
  const many = Array.from({ length: MAX_CHALLENGE_LOOKUPS + 4 }, () =>
    hit(httpPort, path('tok-1'), HOST, 10_000).then((r) => {
      answered.push('status' in r ? r.status : 0);
      return r;
    }),
  );
  // Opened once the service holds as many look-ups as the edge lets through and every other
  // request is answered: any order else would let a late request through to the open service.
  await waitFor(
    `${MAX_CHALLENGE_LOOKUPS} look-ups held, the other 4 answered`,
    () => ({ held, answered: [...answered] }),
    { until: (s) => s.held === MAX_CHALLENGE_LOOKUPS && s.answered.length === 4 },
  );
  open();
  const statuses = (await Promise.all(many)).map((r) => ('status' in r ? r.status : 0));
  expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_CHALLENGE_LOOKUPS);
  expect(statuses.filter((s) => s === 503)).toHaveLength(4);
  hold = undefined;
});
