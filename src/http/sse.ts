// Server-sent events (text/event-stream) from Fastify. The reply is hijacked, so Fastify's
// serializer and onSend hooks are bypassed: the headers set so far (security headers) are
// copied by hand. Checks that can fail (auth, access) must run before the stream opens, so
// their errors still answer as application/problem+json.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HeldCount } from '../metrics/held.ts';

export const HEARTBEAT_MS = 15_000;
// How long a client waits before reconnecting (with Last-Event-ID) after the stream drops.
const RETRY_MS = 3_000;

export interface EventStream {
  /** Writes one event. With an `id`, the client's Last-Event-ID resumes after it. False while the socket buffer is full. */
  send(event: string, data: unknown, id?: string): boolean;
  /** Resolves once the socket buffer has drained (at once when it is not full) or the stream closed. */
  drained(): Promise<void>;
  /** Ends the response; idempotent. */
  close(): void;
  readonly closed: boolean;
  /** Runs once when the stream ends for any reason: close(), the client leaving, the server stopping. */
  onClose(fn: () => void): void;
}

/** True when the client asks for a stream rather than a JSON answer. */
export function wantsEventStream(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return accept
    .split(',')
    .some((part) => (part.split(';')[0] ?? '').trim().toLowerCase() === 'text/event-stream');
}

/** The id of the last event a reconnecting client saw. */
export function lastEventId(req: FastifyRequest): string | undefined {
  const v = req.headers['last-event-id'];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * Returns an opener of event streams for routes of `app`. Open streams are ended when the app
 * closes: server.close() waits for every active connection, and a stream never ends by itself.
 * `held` counts the streams open (metrics).
 */
export function eventStreams(
  app: FastifyInstance,
  { heartbeatMs = HEARTBEAT_MS, held }: { heartbeatMs?: number; held?: HeldCount } = {},
) {
  const open = new Set<EventStream>();
  // A stream whose request was still being checked when the app began closing opens after
  // this hook ran: it is closed as soon as it opens, or the server would wait for it forever.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    for (const s of [...open]) s.close();
  });

  return function openEventStream(reply: FastifyReply): EventStream {
    const res = reply.raw;
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v;
    reply.hijack();
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies (nginx) must not buffer the stream.
      'x-accel-buffering': 'no',
      // The stream is the connection's whole life; closing it afterwards also lets a shutdown finish at once.
      connection: 'close',
      'x-request-id': reply.request.id,
    });
    // A first write sends the headers now, so the client sees the stream open before any event.
    res.write(`retry: ${RETRY_MS}\n\n`);

    let closed = false;
    const listeners: Array<() => void> = [];
    const waiting = new Set<() => void>();
    const heartbeat = setInterval(() => {
      if (!closed) res.write(': keep-alive\n\n');
    }, heartbeatMs);
    heartbeat.unref();

    const finish = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      open.delete(stream);
      held?.dec();
      for (const resolve of waiting) resolve(); // a writer waiting for drain must not wait forever
      waiting.clear();
      for (const fn of listeners.splice(0)) fn();
    };
    res.on('close', finish);

    const stream: EventStream = {
      send(event, data, id) {
        if (closed) return false;
        return res.write(
          `${id !== undefined ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`,
        );
      },
      drained() {
        if (closed || !res.writableNeedDrain) return Promise.resolve();
        return new Promise<void>((resolve) => {
          const done = () => {
            waiting.delete(done);
            res.off('drain', done);
            resolve();
          };
          waiting.add(done);
          res.once('drain', done);
        });
      },
      close() {
        if (closed) return;
        res.end();
        finish();
      },
      get closed() {
        return closed;
      },
      onClose(fn) {
        if (closed) fn();
        else listeners.push(fn);
      },
    };
    open.add(stream);
    held?.inc();
    if (closing) stream.close();
    return stream;
  };
}
