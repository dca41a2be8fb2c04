// The edge with TLS from a real ACME server (CONTRACT 5b; issue 35), on either data plane
// (acme.test.ts, acme-haproxy.test.ts): the service as an operator runs it (the built-in cloud,
// the process runtime) with ACME_DIRECTORY_URL at Pebble, which
// validates over HTTP-01 against the edge itself. Two tenants' frames on the same port each
// answer at their own hostname over HTTPS with a certificate Pebble issued; plain HTTP
// redirects there but for the challenge path; a custom domain, once verified through a DNS
// server of the test's own (DNS_SERVERS), gets its own certificate; a name no frame holds gets
// no certificate and no handshake; an upgraded connection (a WebSocket's shape) to one frame
// outlives another frame's stop, which answers the 503 page over HTTPS. All traffic goes to
// loopback.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EdgePlane } from '../../src/runner/edge/edge.ts';
import {
  http,
  killAll,
  newTenantFrame,
  startInstance,
  type Instance,
} from '../faults/helpers/service.ts';
import { freePort } from '../helpers/smtp.ts';
import { gitFixture, hit, killApps, until } from '../runner/fixture.ts';
import { startPebble, type Pebble } from './pebble.ts';

/** The suite, with the service's edge on this data plane. */
export function acmeSuite(plane: EdgePlane) {
  const APPS = 'apps.test';
  let root: string;
  let pebble: Pebble;
  let service: Instance;
  let httpPort: number;
  let httpsPort: number;

  // An app that says which frame it is and what the edge told it; an upgrade to `echo` makes
  // the connection an echo of what it receives (a WebSocket's shape, without its framing).
  const APP = `const s = require('http').createServer((req, res) => res.end(JSON.stringify({
    frame: process.env.FRAMEPLANE_FRAME_ID, host: req.headers.host,
    proto: req.headers['x-forwarded-proto'], fhost: req.headers['x-forwarded-host'],
    ffor: req.headers['x-forwarded-for'] })));
  s.on('upgrade', (req, socket) => {
    socket.write('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: echo\\r\\n\\r\\n');
    socket.pipe(socket);
  });
  s.listen(Number(process.env.PORT));`;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'frameplane-acme-'));
    chmodSync(root, 0o711); // as root, the embedded PostgreSQL runs as `postgres`
    const repo = gitFixture(root);
    repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'who',
          private: true,
          scripts: { start: 'node s.js' },
        }),
        's.js': APP,
      },
      'who',
    );
    httpPort = await freePort();
    httpsPort = await freePort();
    pebble = await startPebble({ httpPort, httpsPort });
    service = await startInstance(
      `acme-${plane}`,
      {
        DATA_DIR: join(root, 'data'),
        DATABASE_URL: '',
        CLOUD_AGENT: 'builtin',
        FRAME_RUNTIME: 'process',
        GIT_BASE_URL: repo.gitBaseUrl,
        LOG_LEVEL: 'info',
        FRAMES_ON_EXIT: 'stop',
        APPS_DOMAIN: APPS,
        EDGE_HTTP_PORT: String(httpPort),
        EDGE_HTTPS_PORT: String(httpsPort),
        EDGE_PLANE: plane,
        ACME_DIRECTORY_URL: pebble.directoryUrl,
        ACME_EMAIL: 'ops@example.test',
        NODE_EXTRA_CA_CERTS: pebble.listenerCaFile,
        DNS_SERVERS: `127.0.0.1:${pebble.dnsPort}`,
      },
      60_000,
    );
    // The built-in agent is up, and has told the service its edge, once its edge answers.
    await until(
      'the edge',
      async () => 'status' in (await hit(httpPort, '/', 'x')),
      60_000,
      context,
    );
  }, 120_000);

  afterAll(async () => {
    if (service) await service.kill('SIGTERM');
    killAll();
    await pebble?.stop();
    if (root) {
      killApps(root);
      rmSync(root, { recursive: true, force: true });
    }
  });

  const tenant = (email: string) => newTenantFrame(service.base, email);

  interface Answer {
    status: number;
    body: string;
    headers: Record<string, unknown>;
    peer: PeerCertificate;
  }

  /** One GET over HTTPS to the edge on loopback, SNI and Host the given name, trusting `ca`. */
  function httpsGet(host: string, ca: string, path = '/'): Promise<Answer | { error: string }> {
    return new Promise((done) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: httpsPort,
          path,
          servername: host,
          headers: { host },
          ca,
          agent: false,
        },
        (res) => {
          const peer = (res.socket as TLSSocket).getPeerCertificate();
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (body += c));
          res.on('end', () => done({ status: res.statusCode!, body, headers: res.headers, peer }));
        },
      );
      req.setTimeout(5000, () => req.destroy(new Error('timeout')));
      req.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
      req.end();
    });
  }

  /** An upgraded connection to the frame's app over TLS, which echoes what it is sent. */
  function upgrade(host: string, ca: string) {
    return new Promise<{ echo(text: string): Promise<string>; close(): void }>(
      (resolve, reject) => {
        const req = request({
          host: '127.0.0.1',
          port: httpsPort,
          servername: host,
          ca,
          agent: false,
          headers: { host, connection: 'Upgrade', upgrade: 'echo' },
        });
        req.on('upgrade', (_res, socket) =>
          resolve({
            echo: (text) =>
              new Promise((done) => {
                socket.once('data', (d: Buffer) => done(d.toString()));
                socket.write(text);
              }),
            close: () => socket.destroy(),
          }),
        );
        req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
        req.on('error', reject);
        req.end();
      },
    );
  }

  /** Waits (up to 3 minutes) for the host to answer `status` over HTTPS; answers that answer. */
  /** The first answer of `status` (and, given, of that edge page: a stop may answer 503
   *  bad_gateway for a moment, between its replica's end and its route's change). */
  function answerOverHttps(host: string, ca: string, status = 200, page?: string) {
    return until(
      `${host} over HTTPS, ${status}${page ? ` ${page}` : ''}`,
      async () => {
        const r = await httpsGet(host, ca);
        if (!('status' in r) || r.status !== status) return undefined;
        return !page || r.headers['x-frameplane-edge'] === page ? r : undefined;
      },
      180_000,
      context,
    );
  }

  const context = () =>
    `${service.log().slice(-4000)}\n--- pebble ---\n${pebble.log().slice(-2000)}`;

  it('serves two tenants on one port at their own hostnames over HTTPS, certificates from ACME', {
    timeout: 240_000,
  }, async () => {
    const ann = await tenant('ann@example.test');
    const bob = await tenant('bob@example.test');
    for (const t of [ann, bob]) {
      expect(t.frame.hostname).toMatch(
        new RegExp(`^web-[a-z0-9]{6}\\.${APPS.replace('.', '\\.')}$`),
      );
      expect(t.frame.url).toBe(`https://${t.frame.hostname}:${httpsPort}`);
    }
    const ca = await pebble.root();
    for (const t of [ann, bob]) {
      const answer = await answerOverHttps(t.frame.hostname, ca);
      // Its own app, told by the edge how it was reached.
      expect(JSON.parse(answer.body)).toEqual({
        frame: t.frame.id,
        host: t.frame.hostname,
        proto: 'https',
        fhost: t.frame.hostname,
        ffor: '127.0.0.1',
      });
      // A certificate for this name alone, issued by the ACME server (verified against its root).
      expect(answer.peer.subjectaltname).toBe(`DNS:${t.frame.hostname}`);
      const leaf = new X509Certificate(answer.peer.raw);
      expect(leaf.checkHost(t.frame.hostname)).toBe(t.frame.hostname);
    }

    // Plain HTTP redirects to HTTPS, path and query kept; the challenge path does not.
    const plain = await hit(httpPort, '/a/b?c=1', ann.frame.hostname);
    expect(plain).toMatchObject({
      status: 308,
      headers: { location: `https://${ann.frame.hostname}:${httpsPort}/a/b?c=1` },
    });
    const challenge = await hit(
      httpPort,
      '/.well-known/acme-challenge/no-such-token',
      ann.frame.hostname,
    );
    expect(challenge).toMatchObject({ status: 404 });
    // A host no frame holds: 404 over HTTP, and no handshake over HTTPS.
    expect(await hit(httpPort, '/', `nobody.${APPS}`)).toMatchObject({ status: 404 });
    expect(await httpsGet(`nobody.${APPS}`, ca)).toHaveProperty('error');
  });

  it("a tunnel to one frame over TLS outlives another frame's stop, which answers 503", {
    timeout: 240_000,
  }, async () => {
    const dan = await tenant('dan@example.test');
    const eve = await tenant('eve@example.test');
    const ca = await pebble.root();
    for (const t of [dan, eve]) await answerOverHttps(t.frame.hostname, ca);
    const tunnel = await upgrade(dan.frame.hostname, ca);
    expect(await tunnel.echo('before')).toBe('before');
    const stop = await http(service.base, 'POST', `${eve.path}/stop`, { token: eve.token });
    expect(stop.status, stop.text).toBe(202);
    const stopped = await answerOverHttps(eve.frame.hostname, ca, 503, 'stopped');
    expect(stopped.headers['x-frameplane-edge']).toBe('stopped');
    expect(stopped.body).toContain('App stopped');
    expect(await tunnel.echo('after')).toBe('after');
    tunnel.close();
  });

  it('a custom domain gets its own certificate once verified, and not before', {
    timeout: 240_000,
  }, async () => {
    const cat = await tenant('cat@example.test');
    const ca = await pebble.root();
    const added = await http(service.base, 'POST', `${cat.path}/domains`, {
      token: cat.token,
      body: { hostname: 'shop.example.test' },
    });
    expect(added.status, added.text).toBe(201);
    expect(added.json.target).toBe(cat.frame.hostname);
    // Not verified: not routed, no certificate.
    expect(await hit(httpPort, '/', 'shop.example.test')).toMatchObject({ status: 404 });
    // The owner publishes the record at the test's own DNS server; the service asks it there.
    await pebble.setTxt(added.json.verification.name, added.json.verification.value);
    const verified = await http(
      service.base,
      'POST',
      `${cat.path}/domains/${added.json.id}/verify`,
      {
        token: cat.token,
      },
    );
    expect(verified.status, verified.text).toBe(200);
    const answer = await answerOverHttps('shop.example.test', ca);
    expect(JSON.parse(answer.body)).toMatchObject({
      frame: cat.frame.id,
      host: 'shop.example.test',
    });
    expect(answer.peer.subjectaltname).toBe('DNS:shop.example.test');
  });
}
