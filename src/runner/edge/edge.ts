// The agent's edge: the routing table its supervisors keep, and the data plane that serves it
// (the built-in one, server.ts), when the agent was given a port for it. Without one (a
// self-hosted agent started with no --edge-port) the table is still kept, and nothing serves
// it: the agent tells the service `edge: null`, and its frames have no URL.
import type { AgentLog } from '../log.ts';
import type { Endpoint } from '../runtimes/runtime.ts';
import { type CertificateSource, EdgeCertificates } from './certificates.ts';
import { EdgeServer, EDGE_DEFAULTS, type EdgeServerOptions } from './server.ts';
import { HaproxyPlane } from './haproxy/plane.ts';
import { freePort } from '../processes.ts';
import { RoutingTable, type FrameRoute } from './table.ts';
import { RequestMeter } from './request-meter.ts';
import { EdgeLines } from './edge-lines.ts';

/** What the agent tells the service about its edge on its first sync (CONTRACT 5b). */
export interface EdgeInfo {
  http_port: number;
  https_port: number | null;
}

/** What a supervisor tells the edge about its frame. */
export interface Routes {
  set(route: FrameRoute): void;
  /** The frame left this agent: its hosts answer 404. */
  remove(frameId: string): void;
  /**
   * Resolves once the requests in flight to these replicas have ended (or the drain timeout
   * passed), so that a replica the route no longer names can be stopped without cutting them.
   */
  drain(ends: readonly Endpoint[]): Promise<void>;
}

export interface Edge {
  routes: Routes;
  table: RoutingTable;
  info: EdgeInfo | null;
  /** With HTTPS: the certificates it serves, which follow the desired state. */
  certificates?: EdgeCertificates;
  /** What it answered per frame, for the metrics sampler. */
  requests: RequestMeter;
  close(): Promise<void>;
}

/** How long a replica taken out of its route may finish its requests before it is stopped. */
export const DRAIN_TIMEOUT_MS = 10_000;

export interface EdgeOptions
  extends Partial<Omit<EdgeServerOptions, 'table' | 'tls' | 'requests' | 'lines'>> {
  /** Where a line of the edge's own failures for a frame goes (its log, source `edge`). */
  onLine?: (frameId: string, line: string) => void;
  /** No port: no data plane. */
  port?: number;
  /** HTTPS too, on this port (0: any), with certificates from `source`; needs `port`. */
  https?: { port: number; source: CertificateSource; log: AgentLog };
  drainTimeoutMs?: number;
  /** Which data plane serves the table: the built-in one (default) or HAProxy (needs `dir`). */
  plane?: EdgePlane;
  /** The HAProxy plane's files and admin socket (the agent's own directory). */
  dir?: string;
  /** The HAProxy plane: frames it routes at once. */
  slots?: number;
  /** Where the HAProxy plane tells a route change it could not apply. */
  log?: AgentLog;
}

export const EDGE_PLANES = ['builtin', 'haproxy'] as const;
export type EdgePlane = (typeof EDGE_PLANES)[number];

interface Plane {
  readonly port: number;
  readonly httpsPort?: number;
  listen(): Promise<void>;
  drain(ends: readonly Endpoint[], timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

async function haproxyPlane(
  o: EdgeOptions,
  table: RoutingTable,
  requests: RequestMeter,
  lines: EdgeLines | undefined,
  drainTimeoutMs: number,
  certificates?: EdgeCertificates,
) {
  if (!o.dir) throw new Error('the HAProxy plane needs a directory of its own');
  const https = o.https &&
    certificates && {
      port: o.https.port || (await freePort()),
      certificates,
      source: o.https.source,
    };
  return new HaproxyPlane({
    table,
    requests,
    lines,
    dir: o.dir,
    host: o.host ?? '127.0.0.1',
    httpPort: o.port || (await freePort()),
    https,
    slots: o.slots,
    maxBodyBytes: o.maxBodyBytes ?? EDGE_DEFAULTS.maxBodyBytes,
    headersTimeoutMs: o.headersTimeoutMs ?? EDGE_DEFAULTS.headersTimeoutMs,
    keepAliveTimeoutMs: o.keepAliveTimeoutMs ?? EDGE_DEFAULTS.keepAliveTimeoutMs,
    drainTimeoutMs,
    onError: (err, about) =>
      o.log?.error({ ...about, err: err.message }, 'haproxy plane: change not applied'),
  });
}

export async function startEdge(o: EdgeOptions = {}): Promise<Edge> {
  const table = new RoutingTable();
  const requests = new RequestMeter();
  const lines = o.onLine && new EdgeLines(o.onLine);
  let server: Plane | undefined;
  const https = o.port === undefined ? undefined : o.https;
  const certificates = https && new EdgeCertificates(https.source, https.log);
  const drainMs = o.drainTimeoutMs ?? DRAIN_TIMEOUT_MS;
  if (o.port !== undefined && o.plane === 'haproxy') {
    server = await haproxyPlane(o, table, requests, lines, drainMs, certificates);
  } else if (o.port !== undefined) {
    const tls = https && certificates && { ...https, certificates };
    const { https: _, onLine: __, ...rest } = o;
    const host = o.host ?? '127.0.0.1';
    server = new EdgeServer({ ...rest, host, port: o.port, table, tls, requests, lines });
  }
  await server?.listen();
  return {
    table,
    certificates,
    requests,
    info: server ? { http_port: server.port, https_port: server.httpsPort ?? null } : null,
    routes: {
      set: (route) => table.set(route),
      remove: (frameId) => table.remove(frameId),
      drain: (ends) => server?.drain(ends, drainMs) ?? Promise.resolve(),
    },
    close: async () => server?.close(),
  };
}
