// The frame's own port: a TCP proxy that hands each connection to the next healthy replica in
// turn. TCP, not HTTP, so any protocol works; the price is that a keep-alive connection stays
// with one replica. If the port is taken, it keeps trying, says so in the frame's logs and
// tells the supervisor, which reports the frame's replicas as `port_in_use`.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Endpoint } from './runtimes/runtime.ts';

export interface ProxyOptions {
  host: string;
  port: number;
  /** Where the replicas that may take connections now are reached, in a stable order. */
  upstreams(): Endpoint[];
  note(message: string): void;
  /** The port is held by someone else (true) or ours again (false). */
  blocked?(held: boolean): void;
}

const RETRY_LISTEN_MS = 2000;

export class FrameProxy {
  private server?: Server;
  private sockets = new Set<Socket>();
  private next = 0;
  private retry?: NodeJS.Timeout;
  private closed = false;
  private warned = false;

  constructor(private o: ProxyOptions) {}

  get port() {
    return this.o.port;
  }
  get listening() {
    return this.server !== undefined;
  }

  /** Starts listening (or keeps trying in the background); resolves after the first attempt. */
  listen(): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      const server = createServer((client) => this.accept(client));
      server.once('error', (err: NodeJS.ErrnoException) => {
        if (!this.warned) {
          const why =
            err.code === 'EADDRINUSE'
              ? 'another process holds the port'
              : (err.code ?? err.message);
          this.o.note(
            `[frameplane] cannot listen on ${this.o.host}:${this.o.port} (${why}); retrying`,
          );
          this.o.blocked?.(true);
        }
        this.warned = true;
        server.close();
        if (!this.closed) {
          this.retry = setTimeout(() => void this.listen(), RETRY_LISTEN_MS);
          this.retry.unref();
        }
        resolve();
      });
      server.listen({ port: this.o.port, host: this.o.host, exclusive: true }, () => {
        if (this.closed) {
          server.close();
          return resolve();
        }
        if (this.warned) {
          this.o.note(`[frameplane] listening on ${this.o.host}:${this.o.port}`);
          this.warned = false;
          this.o.blocked?.(false);
        }
        this.server = server;
        resolve();
      });
    });
  }

  private accept(client: Socket) {
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause(); // hold the client's first bytes until an upstream is connected
    this.dial(client, this.o.upstreams(), 0);
  }

  private dial(client: Socket, ends: Endpoint[], tried: number) {
    if (client.destroyed) return;
    const end = ends[this.next++ % ends.length];
    if (!end || tried >= ends.length) return void client.destroy();
    const upstream = connect(end);
    this.sockets.add(upstream);
    upstream.once('close', () => this.sockets.delete(upstream));
    upstream.once('error', () => {
      upstream.destroy();
      if (!connected)
        this.dial(client, ends, tried + 1); // that replica just went away: the next one
      else client.destroy();
    });
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.pipe(upstream).pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
      client.resume();
    });
  }

  /** Stops listening; with `drop`, also ends the connections in flight. */
  async close(drop = true): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    // close() stops accepting at once; its callback waits for the open connections to end.
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    if (drop) {
      for (const s of this.sockets) s.destroy();
      await done;
    }
  }
}
