// One request through the edge: sent to a frame's replica over that replica's undici pool, its
// answer streamed back as it comes (bodies are never held whole: uploads, server-sent events
// and chunked answers pass), with back-pressure both ways. A replica that refuses the
// connection (it went away between two health checks) costs nothing: the request, not yet
// sent, goes to the next one; only when none takes it does the client get the 502 page.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Endpoint } from '../runtimes/runtime.ts';
import { downstreamHeaders, upstreamHeaders } from './headers.ts';
import { page, type EdgePage } from './pages.ts';
import type { Upstreams } from './upstreams.ts';

/** Failures to connect: the request was not sent, another replica may take it. */
const CONNECT_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);
/** A keep-alive connection the replica closed as the request went out: safe to send again
 *  only if the method is idempotent (RFC 9110 9.2.2) and the request has no body. */
const CLOSED_UNDER_US = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

const codeOf = (err: unknown) => (err as { code?: string } | undefined)?.code ?? '';

export function sendPage(req: IncomingMessage, res: ServerResponse, kind: EdgePage) {
  if (res.headersSent) return void res.destroy();
  const p = page(kind, req.headers.host);
  // The rest of the request is not read: the connection cannot carry another.
  if (kind === 'bad_request' || kind === 'too_large') res.shouldKeepAlive = false;
  res.writeHead(p.status, p.headers);
  res.end(req.method === 'HEAD' ? undefined : p.body);
}

/** Whether the request carries a body (RFC 9112 6.3). */
const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

const TOO_LARGE = 'EDGE_BODY_TOO_LARGE';

/** Whether the body is said to be larger than `max` bytes: known before a byte is read. */
export const declaredTooLarge = (req: IncomingMessage, max: number) =>
  Number(req.headers['content-length'] ?? 0) > max;

/** The request's body, failing once more than `max` bytes have come (a chunked body says no
 *  size up front). */
function capped(req: IncomingMessage, max: number): Readable {
  let seen = 0;
  const out = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen <= max) return done(null, chunk);
      done(Object.assign(new Error('request body too large'), { code: TOO_LARGE }));
    },
  });
  pipeline(req, out, () => {});
  return out;
}

export interface ForwardHooks {
  /** The answer is done: sent whole, or its connection closed. */
  closed?(): void;
  /** No replica answered: the edge sends its 502 or 504 page; undici's error code. */
  failed?(code: string): void;
}

export function forward(
  upstreams: Upstreams,
  req: IncomingMessage,
  res: ServerResponse,
  ends: readonly Endpoint[],
  first: number,
  proto: 'http' | 'https',
  maxBodyBytes: number,
  hooks: ForwardHooks = {},
) {
  const headers = upstreamHeaders(req, proto);
  const body = hasBody(req) ? capped(req, maxBodyBytes) : null;
  let controller: Dispatcher.DispatchController | undefined;
  let clientGone = false;
  res.once('close', () => {
    hooks.closed?.();
    if (res.writableFinished) return;
    clientGone = true;
    controller?.abort(new Error('client closed the connection'));
  });
  res.on('drain', () => controller?.resume());

  const attempt = (tried: number) => {
    if (upstreams.closed) return void res.destroy(); // the edge is closing
    const end = ends[(first + tried) % ends.length] as Endpoint;
    const pool = upstreams.pool(end);
    const done = upstreams.begin(end);
    let started = false;
    pool.dispatch(
      { path: req.url as string, method: req.method as string, headers, body },
      {
        onRequestStart(c) {
          controller = c;
          if (clientGone) c.abort(new Error('client closed the connection'));
        },
        onResponseStart(c, status, upstream) {
          if (status < 200) return; // 100 Continue and other interim answers stay upstream
          started = true;
          try {
            res.writeHead(status, downstreamHeaders(upstream));
          } catch (err) {
            c.abort(err as Error); // a header Node will not send: the 502 page instead
          }
        },
        onResponseData(c, chunk) {
          if (!res.write(chunk)) c.pause();
        },
        onResponseEnd() {
          done();
          res.end();
        },
        onResponseError(_c, err) {
          done();
          if (clientGone) return;
          if (started && res.headersSent) return void res.destroy();
          const code = codeOf(err);
          if (code === TOO_LARGE || codeOf((err as { cause?: unknown }).cause) === TOO_LARGE)
            return sendPage(req, res, 'too_large');
          const unsent = CONNECT_FAILURES.has(code) && !body?.readableDidRead;
          const resend =
            CLOSED_UNDER_US.has(code) && body === null && IDEMPOTENT.has(req.method as string);
          if ((unsent || resend) && tried + 1 < ends.length) return attempt(tried + 1);
          hooks.failed?.(code);
          sendPage(
            req,
            res,
            code === 'UND_ERR_HEADERS_TIMEOUT' ? 'gateway_timeout' : 'bad_gateway',
          );
        },
      },
    );
  };
  attempt(0);
}
