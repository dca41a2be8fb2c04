// A webhook receiver as a project would run one: a real HTTP server on 127.0.0.1 that checks
// each delivery's Frameplane-Signature with the endpoint's secret, the way docs/api.md tells
// receivers to (written out here, not taken from src/, so the service is checked against the
// documented rule rather than against itself). It answers the status `answer` picks.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../helpers/wait.ts';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The signature verified with the secret given (null: no secret given yet). */
  verified: boolean | null;
  status: number;
}

/** The documented check: HMAC-SHA256(secret, "<t>.<body>") among the v1 values, t recent. */
export function verify(secret: string, header: string, body: string, nowSeconds: number) {
  const fields = header.split(',').map((kv) => kv.split('='));
  const t = Number(fields.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return fields
    .filter(([k]) => k === 'v1')
    .some(([, v]) => {
      const given = Buffer.from(v ?? '', 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

export async function startReceiver(
  o: {
    answer?: (n: number) => number;
    /** The signing secret, once known; `now` is the service's time (the test clock). */
    secret?: () => string | undefined;
    now?: () => Date;
    /** Awaited before answering: a receiver that takes its time. */
    hold?: () => Promise<void>;
  } = {},
) {
  const got: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      await o.hold?.();
      const body = Buffer.concat(chunks).toString('utf8');
      const secret = o.secret?.();
      const header = String(req.headers['frameplane-signature'] ?? '');
      const now = Math.floor((o.now?.() ?? new Date()).getTime() / 1000);
      const verified = secret === undefined ? null : verify(secret, header, body, now);
      const status = verified === false ? 400 : (o.answer?.(got.length + 1) ?? 200);
      got.push({ headers: req.headers, body, verified, status });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status < 300 ? 'thanks' : `no (${status})`);
    });
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks/frameplane`,
    got,
    connections: () => connections,
    /** The events received so far, parsed. */
    events: () => got.map((g) => JSON.parse(g.body)),
    until: (n: number, what = `${n} deliveries`) =>
      waitFor(`the receiver to get ${what}`, () => got.length >= n, {
        context: () => got.map((g) => g.body).join('\n'),
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
