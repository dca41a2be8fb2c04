// Secrets that travel in a URL never reach the log. The invitation token is a path segment
// (`/invitations/<token>`, `/v2/teams/invitations/<token>/accept|decline`); a query value named
// like a token or secret is cut too, and so is any value shaped like one of our secrets
// (secrets.ts SECRET_SHAPE) wherever it appears.
// Applied as pino serializers (`url`, `req`) to every logger the service writes with.
import type { SerializerFn } from 'pino';
import { SECRET_SHAPE } from '../secrets.ts';

export const REDACTED = '[redacted]';

/** `/invitations/<token>` (the page, not its assets) and `/v2/teams/invitations/<token>/...`. */
const TOKEN_SEGMENT = /^(\/+(?:v2\/+teams\/+)?invitations\/+)(?!assets(?:[/?#]|$))[^/?#]+/i;
const SECRET_QUERY = /(?:^|[-_.])(?:token|secret|password|signature|sig|code)$/i;
const SECRET_SHAPES = new RegExp(SECRET_SHAPE.source, 'g');

export function redactUrl(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  let query = q < 0 ? '' : url.slice(q);
  path = path.replace(TOKEN_SEGMENT, `$1${REDACTED}`);
  if (query) {
    query = query.replace(/([?&;])([^=&;#]*)=([^&;#]*)/g, (all, sep: string, name: string) => {
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        /* keep as sent */
      }
      return SECRET_QUERY.test(decoded) ? `${sep}${name}=${REDACTED}` : all;
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
