// The built-in data plane: one HTTP server per agent that routes each request by its Host header
// through the routing table (table.ts) to the frame's replicas. Node's own HTTP server parses
// the front (its llhttp parser refuses what is malformed: Content-Length beside
// Transfer-Encoding, two differing Content-Lengths, oversized headers, a missing Host in
// HTTP/1.1); undici carries requests to replicas (forward.ts, tunnel.ts). Routes are read per
// request: a change is one map write, and the server is never restarted for it, so no open
// connection of any frame (keep-alive or WebSocket) notices another frame's route changing.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Endpoint } from '../runtimes/runtime.ts';
import { ambiguity } from './headers.ts';
import { forward, sendPage } from './forward.ts';
import type { RoutingTable } from './table.ts';
import { refuseUpgrade, tunnel } from './tunnel.ts';
import { Upstreams, type UpstreamOptions } from './upstreams.ts';

export interface EdgeServerOptions {
  host: string;
  /** 0: any free port (`port` tells which once listening). */
  port: number;
  table: RoutingTable;
  /** A client's whole header block must arrive within this (slow clients, Slowloris). */
  headersTimeoutMs?: number;
  /** A client's whole request, body included, must arrive within this. */
  requestTimeoutMs?: number;
  /** How long an idle client connection stays open. */
  keepAliveTimeoutMs?: number;
  /** Largest header block a client may send (Node answers 431 beyond). */
  maxHeaderSize?: number;
  upstream?: Partial<UpstreamOptions>;
}

export const EDGE_DEFAULTS = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 5_000,
  maxHeaderSize: 16 * 1024,
  upstream: { headersTimeoutMs: 120_000, bodyTimeoutMs: 0, connectTimeoutMs: 5_000 },
};

export class EdgeServer {
  private server: Server;
  private upstreams: Upstreams;
  private tunnels = new Set<Duplex>();
  /** Per frame, where its round-robin goes next. */
  private turns = new Map<string, number>();
  private stopListening: () => void;
  private pruneTimer?: NodeJS.Timeout;

  constructor(private o: EdgeServerOptions) {
    this.upstreams = new Upstreams({ ...EDGE_DEFAULTS.upstream, ...o.upstream });
    const headersTimeout = o.headersTimeoutMs ?? EDGE_DEFAULTS.headersTimeoutMs;
    this.server = createServer(
      {
        headersTimeout,
        requestTimeout: o.requestTimeoutMs ?? EDGE_DEFAULTS.requestTimeoutMs,
        keepAliveTimeout: o.keepAliveTimeoutMs ?? EDGE_DEFAULTS.keepAliveTimeoutMs,
        maxHeaderSize: o.maxHeaderSize ?? EDGE_DEFAULTS.maxHeaderSize,
        // The timeouts above are checked this often: a tenth of the shortest, at most 1 s.
        connectionsCheckingInterval: Math.min(1000, Math.max(50, headersTimeout / 10)),
        requireHostHeader: true,
        joinDuplicateHeaders: false,
      },
      (req, res) => this.request(req, res),
    );
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.upgrade(req, socket, head),
    );
    // Pools of replicas no route names any more are closed, a moment after the change.
    this.stopListening = o.table.onChange(() => {
      this.pruneTimer ??= setTimeout(() => {
        this.pruneTimer = undefined;
        this.upstreams.prune(o.table.endpoints());
      }, 1000);
      this.pruneTimer.unref();
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: this.o.host, port: this.o.port, exclusive: true }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private turn(frameId: string, n: number) {
    const t = this.turns.get(frameId) ?? 0;
    this.turns.set(frameId, (t + 1) % n);
    return t % n;
  }

  private request(req: IncomingMessage, res: ServerResponse) {
    if (ambiguity(req)) return sendPage(req, res, 'bad_request');
    const target = this.o.table.resolve(req.headers.host);
    if (target.kind === 'page') return sendPage(req, res, target.page);
    const ends = target.upstreams;
    forward(this.upstreams, req, res, ends, this.turn(target.frameId, ends.length), 'http');
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer) {
    socket.on('error', () => socket.destroy());
    if (ambiguity(req)) return refuseUpgrade(req, socket, 'bad_request');
    const target = this.o.table.resolve(req.headers.host);
    if (target.kind === 'page') return refuseUpgrade(req, socket, target.page);
    const ends = target.upstreams;
    const first = this.turn(target.frameId, ends.length);
    tunnel(this.upstreams, this.tunnels, req, socket, head, ends, first, 'http');
  }

  /** Resolves once no request is in flight to these replicas, or after `timeoutMs`. */
  drain(ends: readonly Endpoint[], timeoutMs: number): Promise<void> {
    return this.upstreams.drain(ends, timeoutMs);
  }

  /** Stops listening and ends every connection, tunnels included. */
  async close(): Promise<void> {
    this.stopListening();
    clearTimeout(this.pruneTimer);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    for (const s of this.tunnels) s.destroy();
    this.tunnels.clear();
    await this.upstreams.destroy();
    await closed;
  }
}
