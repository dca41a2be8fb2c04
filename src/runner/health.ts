// The health check of one replica: a connection to its endpoint, then `GET <path>` on it (the
// frame's health_check_path, `/` by default). Any HTTP status below 500 passes. An app that
// does not speak HTTP (a raw TCP service) passes on the connect alone, until it has once
// answered HTTP: from then on silence or a dropped connection is a failure, as a hung web
// server must not look healthy. Once healthy, most checks are a bare connect, which leaves no
// line in the app's access log; an HTTP request goes every HTTP_EVERY_MS.
import { connect } from 'node:net';
import type { Endpoint } from './runtimes/runtime.ts';

export type Probe =
  | { kind: 'refused' }
  | { kind: 'http'; status: number }
  /** Connected, but no HTTP answer: another protocol, or silence until the timeout. */
  | { kind: 'tcp' }
  /**
   * Connected, then closed by the other side without a byte: nothing serves behind the port.
   * Docker's port proxy accepts for a container whose app does not listen, then closes.
   */
  | { kind: 'closed' };

export function probe(
  endpoint: Endpoint,
  o: { path?: string; http?: boolean; timeoutMs?: number } = {},
): Promise<Probe> {
  const http = o.http ?? true;
  return new Promise((resolve) => {
    const socket = connect(endpoint);
    let connected = false;
    let data = '';
    const done = (p: Probe) => {
      socket.destroy();
      resolve(p);
    };
    socket.setTimeout(o.timeoutMs ?? 3000, () =>
      done(connected ? { kind: 'tcp' } : { kind: 'refused' }),
    );
    socket.once('error', () =>
      done(connected ? { kind: data ? 'tcp' : 'closed' } : { kind: 'refused' }),
    );
    socket.once('close', () =>
      done(connected ? { kind: data ? 'tcp' : 'closed' } : { kind: 'refused' }),
    );
    socket.once('connect', () => {
      connected = true;
      // A bare check waits a moment: a port proxy with nothing behind it closes at once.
      if (!http) return void setTimeout(() => done({ kind: 'tcp' }), 200);
      socket.write(
        `GET ${o.path ?? '/'} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: frameplane-agent/health\r\nConnection: close\r\n\r\n`,
      );
    });
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      data += chunk;
      const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(data);
      if (m) done({ kind: 'http', status: Number(m[1]) });
      else if (data.length >= 12 || !'HTTP/'.startsWith(data.slice(0, 5))) done({ kind: 'tcp' });
    });
  });
}

/** Whether a probe passes, given what the replica spoke before (a bare connect passes if it connected). */
export function passes(p: Probe, speaksHttp: boolean, httpAsked = true): boolean {
  if (p.kind === 'refused' || p.kind === 'closed') return false;
  if (p.kind === 'http') return p.status < 500;
  return !httpAsked || !speaksHttp;
}

export const FAILURES_FOR_UNHEALTHY = 3;
/** Check cadence: every second until healthy, every five seconds after. */
export const checkEveryMs = (healthy: boolean) => (healthy ? 5000 : 1000);
/** Once healthy, an HTTP request this often; bare connects in between. */
export const HTTP_EVERY_MS = 30_000;
/** A replica that never passed by then is reported unhealthy (`start_timeout`). */
export const DEFAULT_START_TIMEOUT_MS = 60_000;
