// The health check of one replica: a TCP connect to its private port, then `GET /` on the same
// connection. Any HTTP status below 500 passes. An app that does not speak HTTP (a raw TCP
// service) passes on the connect alone, until it has once answered HTTP: from then on silence
// or a dropped connection is a failure, as a hung web server must not look healthy.
import { connect } from 'node:net';

export type Probe =
  | { kind: 'refused' }
  | { kind: 'http'; status: number }
  /** Connected, but no HTTP answer: another protocol, a timeout or a closed connection. */
  | { kind: 'tcp' };

export function probe(port: number, timeoutMs = 3000): Promise<Probe> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let connected = false;
    let data = '';
    const done = (p: Probe) => { socket.destroy(); resolve(p); };
    socket.setTimeout(timeoutMs, () => done(connected ? { kind: 'tcp' } : { kind: 'refused' }));
    socket.once('error', () => done(connected ? { kind: 'tcp' } : { kind: 'refused' }));
    socket.once('close', () => done({ kind: 'tcp' }));
    socket.once('connect', () => {
      connected = true;
      socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: frameplane-agent/health\r\nConnection: close\r\n\r\n`);
    });
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      data += chunk;
      const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(data);
      if (m) done({ kind: 'http', status: Number(m[1]) });
      else if (data.length >= 12 || !'HTTP/'.startsWith(data.slice(0, 5))) done({ kind: 'tcp' });
    });
  });
}

/** Whether a probe passes, given what the replica spoke before. */
export function passes(p: Probe, speaksHttp: boolean): boolean {
  if (p.kind === 'refused') return false;
  if (p.kind === 'http') return p.status < 500;
  return !speaksHttp;
}

export const FAILURES_FOR_UNHEALTHY = 3;
/** Check cadence: every second until healthy, every five seconds after. */
export const checkEveryMs = (healthy: boolean) => (healthy ? 5000 : 1000);
/** A starting replica has this long to pass before its failures count. */
export const START_GRACE_MS = 30_000;
