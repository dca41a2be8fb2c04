// What the edge changes in the headers it passes on. Hop-by-hop fields (RFC 9110 7.6.1) belong
// to one connection: Connection and the fields it names, Keep-Alive, Proxy-Connection, TE,
// Transfer-Encoding and Upgrade are not forwarded either way (the edge frames each side's body
// itself, and an Upgrade goes on through the upgrade path only). X-Forwarded-For, -Proto and
// -Host are the edge's to say: no proxy in front of it is trusted yet, so what a client sent
// under those names, or as `Forwarded`, is dropped, never passed on.
import type { IncomingMessage } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'upgrade',
]);

/** Set by the edge alone; a client's values are dropped. */
const EDGE_OWNED = new Set([
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'forwarded',
]);

/** Never dropped for being named in Connection: the edge needs them to route and to frame. */
const KEPT = new Set(['host', 'content-length']);

/** The field names a message's Connection headers list (lower case). */
function connectionTokens(raw: readonly string[]): Set<string> | undefined {
  let tokens: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).toLowerCase() !== 'connection') continue;
    tokens ??= new Set();
    for (const t of (raw[i + 1] as string).split(',')) tokens.add(t.trim().toLowerCase());
  }
  return tokens;
}

/** Why a request must be refused rather than forwarded, if it must: it is ambiguous. */
export function ambiguity(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] as string).length === 4 && (raw[i] as string).toLowerCase() === 'host') hosts++;
  }
  if (hosts > 1) return 'more than one Host header';
  // The absolute form names a host of its own (RFC 9112 3.2.2), which may differ from Host.
  if (!req.url?.startsWith('/')) return 'a request target that is not a path';
  return undefined;
}

/**
 * The headers to send upstream, as a flat [name, value, …] list in the client's order and
 * spelling: hop-by-hop and client-sent forwarding fields dropped, the edge's own added.
 * `Expect` is dropped too: the front server has answered `100 Continue` itself.
 */
export function upstreamHeaders(req: IncomingMessage, proto: 'http' | 'https'): string[] {
  const raw = req.rawHeaders;
  const named = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || EDGE_OWNED.has(lower) || lower === 'expect') continue;
    if (named?.has(lower) && !KEPT.has(lower)) continue;
    out.push(name, raw[i + 1] as string);
  }
  out.push(
    'x-forwarded-for',
    req.socket.remoteAddress ?? '',
    'x-forwarded-proto',
    proto,
    'x-forwarded-host',
    req.headers.host ?? '',
  );
  return out;
}

/** An upstream's response headers (parsed, lower-case names) without its hop-by-hop fields. */
export function downstreamHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const connection = headers.connection;
  const named = connection
    ? new Set(
        (Array.isArray(connection) ? connection.join(',') : connection)
          .split(',')
          .map((t) => t.trim().toLowerCase()),
      )
    : undefined;
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || name === 'trailer') continue;
    if (named?.has(name) && name !== 'content-length') continue;
    out[name] = value;
  }
  return out;
}
