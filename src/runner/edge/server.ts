// The built-in data plane: one HTTP server per agent that routes each request by its Host header
// through the routing table (table.ts) to the frame's replicas. Node's own HTTP server parses
// the front (its llhttp parser refuses what is malformed: Content-Length beside
// Transfer-Encoding, two differing Content-Lengths, oversized headers, a missing Host in
// HTTP/1.1); undici carries requests to replicas (forward.ts, tunnel.ts). Routes are read per
// request: a change is one map write, and the server is never restarted for it, so no open
// connection of any frame (keep-alive or WebSocket) notices another frame's route changing.
// Each answer for a frame is counted (request-meter.ts): its status, and its time from the
// request's head to the answer's end (or its connection's close).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Endpoint } from '../runtimes/runtime.ts';
import { answerChallenge, CHALLENGE_PREFIX, redirectToHttps } from './acme-answers.ts';
import type { CertificateSource, EdgeCertificates } from './certificates.ts';
import { ambiguity } from './headers.ts';
import { declaredTooLarge, forward, sendPage } from './forward.ts';
import { page } from './pages.ts';
import type { RoutingTable } from './table.ts';
import { refuseUpgrade, tunnel } from './tunnel.ts';
import { Upstreams, type UpstreamOptions } from './upstreams.ts';
import type { RequestMeter } from './request-meter.ts';
import { type EdgeLines, pageDesc, upstreamDesc } from './edge-lines.ts';

export interface EdgeServerOptions {
  host: string;
  /** 0: any free port (`port` tells which once listening). */
  port: number;
  table: RoutingTable;
  /** HTTPS too, on this port (0: any), with these certificates; the service answers challenges. */
  tls?: { port: number; certificates: EdgeCertificates; source: CertificateSource };
  /** A client's whole header block must arrive within this (slow clients, Slowloris). */
  headersTimeoutMs?: number;
  /** A client's whole request, body included, must arrive within this. */
  requestTimeoutMs?: number;
  /** How long an idle client connection stays open. */
  keepAliveTimeoutMs?: number;
  /** Largest header block a client may send (Node answers 431 beyond). */
  maxHeaderSize?: number;
  /** Largest request body passed to an app (413 beyond). */
  maxBodyBytes?: number;
  upstream?: Partial<UpstreamOptions>;
  /** Where each answer for a frame is counted. */
  requests?: RequestMeter;
  /** Where the answers it made itself instead of an app are told (a frame's log). */
  lines?: EdgeLines;
}

export const EDGE_DEFAULTS = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16 * 1024,
  maxBodyBytes: 100 * 2 ** 20,
  upstream: { headersTimeoutMs: 120_000, bodyTimeoutMs: 0, connectTimeoutMs: 5_000 },
};

export class EdgeServer {
  private server: Server;
  private tlsServer?: Server;
  private upstreams: Upstreams;
  private tunnels = new Set<Duplex>();
  /** Per frame, where its round-robin goes next. */
  private turns = new Map<string, number>();
  private stopListening: () => void;
  private pruneTimer?: NodeJS.Timeout;
  /** Challenge look-ups in flight: bounded, as anyone may ask for one. */
  private challenges = { inFlight: 0 };

  constructor(private o: EdgeServerOptions) {
    this.upstreams = new Upstreams({ ...EDGE_DEFAULTS.upstream, ...o.upstream });
    const headersTimeout = o.headersTimeoutMs ?? EDGE_DEFAULTS.headersTimeoutMs;
    const options = {
      headersTimeout,
      requestTimeout: o.requestTimeoutMs ?? EDGE_DEFAULTS.requestTimeoutMs,
      keepAliveTimeout: o.keepAliveTimeoutMs ?? EDGE_DEFAULTS.keepAliveTimeoutMs,
      maxHeaderSize: o.maxHeaderSize ?? EDGE_DEFAULTS.maxHeaderSize,
      // The timeouts above are checked this often: a tenth of the shortest, at most 1 s.
      connectionsCheckingInterval: Math.min(1000, Math.max(50, headersTimeout / 10)),
      requireHostHeader: true,
      joinDuplicateHeaders: false,
    };
    this.server = createServer(options, (req, res) => this.plain(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.upgrade(req, socket, head, 'http'),
    );
    const tls = o.tls;
    if (tls) {
      // Only names we hold a certificate for: any other SNI name (or none) ends the handshake.
      const certs = tls.certificates;
      this.tlsServer = createTlsServer(
        {
          ...options,
          SNICallback: (name, done) => {
            const context = certs.context(name);
            done(context ? null : new Error(`no certificate for "${name}"`), context);
          },
          minVersion: 'TLSv1.2',
        },
        (req, res) => this.request(req, res, 'https'),
      );
      this.tlsServer.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
        this.upgrade(req, socket, head, 'https'),
      );
      this.tlsServer.on('tlsClientError', (_err, socket) => socket.destroy());
    }
    // Pools of replicas no route names any more are closed, a moment after the change.
    this.stopListening = o.table.onChange(() => {
      this.pruneTimer ??= setTimeout(() => {
        this.pruneTimer = undefined;
        this.upstreams.prune(o.table.endpoints());
      }, 1000);
      this.pruneTimer.unref();
    });
  }

  async listen(): Promise<void> {
    await listenOn(this.server, this.o.host, this.o.port);
    if (this.tlsServer && this.o.tls) await listenOn(this.tlsServer, this.o.host, this.o.tls.port);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Where HTTPS is served; undefined without TLS. */
  get httpsPort(): number | undefined {
    return this.tlsServer ? (this.tlsServer.address() as AddressInfo).port : undefined;
  }

  private turn(frameId: string, n: number) {
    const t = this.turns.get(frameId) ?? 0;
    this.turns.set(frameId, (t + 1) % n);
    return t % n;
  }

  /** Plain HTTP: the ACME challenge path of a host we serve, else a redirect to HTTPS for a
   *  host we hold a certificate for, else the frame itself. */
  private plain(req: IncomingMessage, res: ServerResponse) {
    const tls = this.o.tls;
    if (tls && !ambiguity(req)) {
      // Asked of the service, which answers only for a host a frame of this agent holds: the
      // ACME server may ask before this edge has heard of a frame just made.
      if (req.url?.startsWith(CHALLENGE_PREFIX))
        return void answerChallenge(req, res, this.challenges, tls.source);
      if (tls.certificates.has(req.headers.host))
        return redirectToHttps(req, res, this.httpsPort as number);
    }
    this.request(req, res, 'http');
  }

  private request(req: IncomingMessage, res: ServerResponse, proto: 'http' | 'https') {
    if (ambiguity(req)) return sendPage(req, res, 'bad_request');
    const target = this.o.table.resolve(req.headers.host);
    const started = performance.now();
    const { frameId } = target;
    let failed: string | undefined; // why the edge answered itself
    // Once the answer is done (its last byte out, or its connection closed): its status, if one
    // was sent. No listener of its own: a page is done once sent, forward() tells its close.
    const done = () => {
      if (frameId === undefined || !res.headersSent) return;
      const ms = performance.now() - started;
      this.o.requests?.record(frameId, res.statusCode, ms);
      if (failed && res.statusCode >= 500) {
        const [path = '/'] = (req.url ?? '/').split('?');
        const method = req.method ?? '-';
        this.o.lines?.failed(frameId, { status: res.statusCode, desc: failed, method, path, ms });
      }
    };
    const max = this.o.maxBodyBytes ?? EDGE_DEFAULTS.maxBodyBytes;
    if (target.kind === 'page' || declaredTooLarge(req, max)) {
      failed = target.kind === 'page' ? pageDesc(target.page) : undefined;
      sendPage(req, res, target.kind === 'page' ? target.page : 'too_large');
      return done();
    }
    const ends = target.upstreams;
    const first = this.turn(target.frameId, ends.length);
    const hooks = {
      closed: done,
      failed: (code: string) => {
        failed = upstreamDesc(code);
      },
    };
    forward(this.upstreams, req, res, ends, first, proto, max, hooks);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, proto: 'http' | 'https') {
    socket.on('error', () => socket.destroy());
    if (ambiguity(req)) return refuseUpgrade(req, socket, 'bad_request');
    const target = this.o.table.resolve(req.headers.host);
    const started = performance.now();
    const { frameId } = target;
    const answered = (status: number) =>
      frameId !== undefined &&
      this.o.requests?.record(frameId, status, performance.now() - started);
    if (target.kind === 'page') {
      answered(page(target.page).status);
      return refuseUpgrade(req, socket, target.page);
    }
    const ends = target.upstreams;
    const first = this.turn(target.frameId, ends.length);
    tunnel(this.upstreams, this.tunnels, req, socket, head, ends, first, proto, answered);
  }

  /** Resolves once no request is in flight to these replicas, or after `timeoutMs`. */
  drain(ends: readonly Endpoint[], timeoutMs: number): Promise<void> {
    return this.upstreams.drain(ends, timeoutMs);
  }

  /** Stops listening and ends every connection, tunnels included. */
  async close(): Promise<void> {
    this.stopListening();
    clearTimeout(this.pruneTimer);
    const servers = [this.server, ...(this.tlsServer ? [this.tlsServer] : [])];
    const closed = servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    for (const s of servers) s.closeAllConnections();
    for (const s of this.tunnels) s.destroy();
    this.tunnels.clear();
    await this.upstreams.destroy();
    await Promise.all(closed);
  }
}

function listenOn(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
