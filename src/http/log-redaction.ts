// Secrets that travel in a URL never reach the log. Which path segments carry one is learnt
// from the routes as they are registered (app.ts calls learnRoute from onRoute): a parameter
// named like a secret (`:token`: an invitation's, team or org) marks its segment, so a new
// route is covered without a second list to keep. A query value named like a token or secret
// is cut too, and so is any value shaped like one of our secrets (secrets.ts SECRET_SHAPE)
// wherever it appears. Applied as pino serializers (`url`, `req`) to every logger the service
// writes with.
import type { SerializerFn } from 'pino';
import { SECRET_SHAPE } from '../secrets.ts';

export const REDACTED = '[redacted]';

/** A name that says its value is a secret: `token`, `invitation_token`; not `token_id`. */
const SECRET_NAME = /(?:^|[-_.])(?:token|secret|password|signature|sig|code)$/i;
const SECRET_SHAPES = new RegExp(SECRET_SHAPE.source, 'g');

/** A route's segment: a literal (lower case), or a parameter, secret or not. */
type Segment = { literal: string } | { secret: boolean };

const learnt = new Set<string>();
/** Routes with a secret parameter, cut after their last one: what follows it does not matter. */
const secretRoutes: Segment[][] = [];
/** Routes without parameters: a path that is one of them carries nothing (the page's assets). */
const staticPaths = new Set<string>();

const normal = (path: string) => path.toLowerCase().replace(/\/+/g, '/');

function segmentOf(part: string): Segment {
  const param = /^:(\w+)/.exec(part);
  if (param) return { secret: SECRET_NAME.test(param[1] ?? '') };
  // A wildcard or a parameter inside a segment (`a-:b`): any value, never a secret here.
  if (part.includes(':') || part.includes('*')) return { secret: false };
  return { literal: part.toLowerCase() };
}

/** Learns one route's path (Fastify's syntax): its secret parameters are redacted from now on. */
export function learnRoute(url: string) {
  if (learnt.has(url)) return;
  learnt.add(url);
  const segments = url.split('/').filter(Boolean).map(segmentOf);
  if (segments.every((s) => 'literal' in s)) staticPaths.add(normal(url));
  const last = segments.findLastIndex((s) => 'secret' in s && s.secret);
  if (last >= 0) secretRoutes.push(segments.slice(0, last + 1));
}

/**
 * The path with every segment a learnt route says is secret replaced. A path that only begins
 * like such a route (a mistyped suffix, a 404) is redacted too: the token is there all the same.
 */
function redactPath(path: string): string {
  if (staticPaths.has(normal(path))) return path;
  const parts = path.split(/(\/+)/);
  // The indexes in `parts` of the path's segments, separators and empty strings left out.
  const at = parts.flatMap((p, i) => (p !== '' && !p.startsWith('/') ? [i] : []));
  for (const route of secretRoutes) {
    if (route.length > at.length) continue;
    const part = (i: number) => parts[at[i] as number] as string;
    if (!route.every((s, i) => !('literal' in s) || part(i).toLowerCase() === s.literal)) continue;
    route.forEach((s, i) => {
      if ('secret' in s && s.secret) parts[at[i] as number] = REDACTED;
    });
  }
  return parts.join('');
}

export function redactUrl(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  const q = url.indexOf('?');
  const path = redactPath(q < 0 ? url : url.slice(0, q));
  let query = q < 0 ? '' : url.slice(q);
  if (query) {
    query = query.replace(/([?&;])([^=&;#]*)=([^&;#]*)/g, (all, sep: string, name: string) => {
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        /* keep as sent */
      }
      return SECRET_NAME.test(decoded) ? `${sep}${name}=${REDACTED}` : all;
    });
  }
  return `${path}${query}`.replace(SECRET_SHAPES, REDACTED);
}

/** Fastify's request serializer, with the URL redacted (for anything that logs `req`). */
interface LoggedRequest {
  method?: unknown;
  url?: unknown;
  host?: unknown;
  ip?: unknown;
  headers?: { host?: unknown };
  socket?: { remoteAddress?: unknown };
}
const req: SerializerFn = (value: unknown) => {
  if (!value || typeof value !== 'object') return value;
  const r = value as LoggedRequest;
  return {
    method: r.method,
    url: redactUrl(r.url),
    host: r.host ?? r.headers?.host,
    remoteAddress: r.ip ?? r.socket?.remoteAddress,
  };
};

export const logSerializers: Record<string, SerializerFn> = { url: redactUrl, req };
