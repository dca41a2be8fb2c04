// An Upgrade request (WebSockets) through the edge: the handshake goes to a replica through
// undici's upgrade, which parses the replica's answer; once it switched protocols, the client's
// connection and the replica's are joined byte for byte until either side closes. A tunnel
// belongs to its two sockets alone: no route change touches it (only its replica stopping, or
// the edge closing, ends it). A replica that answers without switching (it refuses the
// WebSocket, say with 403) has its answer passed on, and the connection closed after it.
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Endpoint } from '../runtimes/runtime.ts';
import { downstreamHeaders, upstreamHeaders } from './headers.ts';
import { page, rawPage, type EdgePage } from './pages.ts';
import type { Upstreams } from './upstreams.ts';

const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ENOENT', 'UND_ERR_CONNECT_TIMEOUT']);

export function refuseUpgrade(req: IncomingMessage, socket: Duplex, kind: EdgePage) {
  if (socket.writable) socket.end(rawPage(page(kind, req.headers.host)));
  else socket.destroy();
}

type Headers = Record<string, string | string[] | undefined>;

/** An answer's head as the replica gave it (names in lower case, which HTTP/1.1 allows). */
function head(status: number, headers: Headers, close = false) {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`];
  for (const [k, v] of Object.entries(headers))
    for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) lines.push(`${k}: ${one}`);
  if (close) lines.push('connection: close');
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

export function tunnel(
  upstreams: Upstreams,
  tunnels: Set<Duplex>,
  req: IncomingMessage,
  client: Duplex,
  early: Buffer,
  ends: readonly Endpoint[],
  first: number,
  proto: 'http' | 'https',
  /** Told the status the client gets (101 once switched), for the edge's counts. */
  answered: (status: number) => void = () => {},
) {
  const headers = upstreamHeaders(req, proto);
  const upgrade = req.headers.upgrade as string;
  let clientGone = false;
  client.once('close', () => {
    clientGone = true;
  });
  const attempt = (tried: number) => {
    if (upstreams.closed) return void client.destroy(); // the edge is closing
    const end = ends[(first + tried) % ends.length] as Endpoint;
    const done = upstreams.begin(end);
    let responded = false;
    upstreams.pool(end).dispatch(
      { path: req.url as string, method: req.method as string, headers, upgrade },
      {
        onRequestStart(c) {
          if (clientGone) c.abort(new Error('client closed the connection'));
        },
        onRequestUpgrade(_c, _status, parsed, upstream) {
          done();
          if (clientGone) return void upstream.destroy();
          answered(101);
          tunnels.add(client);
          tunnels.add(upstream);
          client.write(head(101, parsed));
          if (early.length > 0) upstream.write(early); // what the client sent past its head
          upstream.pipe(client);
          client.pipe(upstream);
          const close = () => {
            tunnels.delete(client);
            tunnels.delete(upstream);
            client.destroy();
            upstream.destroy();
          };
          upstream.on('error', close).on('close', close);
          client.on('error', close).on('close', close);
        },
        // No switch: the answer goes to the client, its end delimited by closing the connection.
        onResponseStart(c, status, headers) {
          if (status < 200) return;
          if (clientGone) return c.abort(new Error('client closed the connection'));
          responded = true;
          answered(status);
          client.write(head(status, downstreamHeaders(headers), true));
        },
        onResponseData(_c, chunk) {
          if (!clientGone) client.write(chunk);
        },
        onResponseEnd() {
          done();
          client.end();
        },
        onResponseError(_c, err) {
          done();
          if (clientGone) return;
          if (responded) return void client.destroy();
          const code = (err as { code?: string }).code ?? '';
          if (CONNECT_FAILURES.has(code) && tried + 1 < ends.length) return attempt(tried + 1);
          answered(page('bad_gateway').status);
          refuseUpgrade(req, client, 'bad_gateway');
        },
      },
    );
  };
  attempt(0);
}
