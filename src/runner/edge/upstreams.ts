// The edge's connections to replicas: one undici Pool per endpoint (a loopback port, or a Unix
// socket into a process sandbox), whose keep-alive connections every request to that replica
// shares. It counts the requests in flight on each endpoint, so that a deploy or a stop can wait
// for them to finish (drain) before the replica is stopped, and closes the pool of an endpoint
// that no route names any more once its last request is done.
import { Pool } from 'undici';
import type { Endpoint } from '../runtimes/runtime.ts';
import { endpointKey } from './table.ts';

export interface UpstreamOptions {
  /** Longest wait for an upstream's response headers (then 504). */
  headersTimeoutMs: number;
  /** Longest silence inside a response body; 0 lets server-sent events idle for ever. */
  bodyTimeoutMs: number;
  connectTimeoutMs: number;
}

interface Entry {
  pool: Pool;
  inFlight: number;
  /** No route names it: closed once its last request ends. */
  unused: boolean;
}

export class Upstreams {
  private entries = new Map<string, Entry>();
  private waiters = new Set<() => void>();
  /** Destroyed with the edge: no pool opens any more. */
  closed = false;

  constructor(private o: UpstreamOptions) {}

  /** The pool of an endpoint, opened on first use. */
  pool(end: Endpoint): Pool {
    const key = endpointKey(end);
    let e = this.entries.get(key);
    if (!e) {
      const pool =
        'path' in end
          ? new Pool('http://localhost', { ...this.poolOptions(), socketPath: end.path })
          : new Pool(`http://${end.host.includes(':') ? `[${end.host}]` : end.host}:${end.port}`, {
              ...this.poolOptions(),
            });
      e = { pool, inFlight: 0, unused: false };
      this.entries.set(key, e);
    }
    e.unused = false;
    return e.pool;
  }

  private poolOptions() {
    return {
      headersTimeout: this.o.headersTimeoutMs,
      bodyTimeout: this.o.bodyTimeoutMs,
      connectTimeout: this.o.connectTimeoutMs,
    };
  }

  /** A request to `end` starts; the function answered ends it (call it once). */
  begin(end: Endpoint): () => void {
    const key = endpointKey(end);
    const e = this.entries.get(key);
    if (!e) return () => {};
    e.inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      e.inFlight--;
      if (e.inFlight === 0) {
        if (e.unused) this.close(key, e);
        for (const w of this.waiters) w();
      }
    };
  }

  /** Closes the pools of endpoints outside `routed` once idle (a replica gone or stopped). */
  prune(routed: Set<string>) {
    for (const [key, e] of this.entries) {
      if (routed.has(key)) continue;
      e.unused = true;
      if (e.inFlight === 0) this.close(key, e);
    }
  }

  private close(key: string, e: Entry) {
    if (this.entries.get(key) === e) this.entries.delete(key);
    void e.pool.close().catch(() => {});
  }

  /** Resolves once no request is in flight to these endpoints, or after `timeoutMs`. */
  drain(ends: readonly Endpoint[], timeoutMs: number): Promise<void> {
    const keys = ends.map(endpointKey);
    const busy = () => keys.some((k) => (this.entries.get(k)?.inFlight ?? 0) > 0);
    if (!busy()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (!busy()) done();
      };
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      this.waiters.add(check);
    });
  }

  /** Ends every connection (the edge stops). */
  async destroy() {
    this.closed = true;
    const pools = [...this.entries.values()].map((e) => e.pool);
    this.entries.clear();
    for (const w of this.waiters) w();
    await Promise.all(pools.map((p) => p.destroy().catch(() => {})));
  }
}
