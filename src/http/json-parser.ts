// JSON bodies: parsed with prototype-poisoning protection; an empty body counts as no body
// (clients often send Content-Type: application/json on a bodiless POST); NUL characters are
// refused here because PostgreSQL text cannot hold them.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from './errors.ts';

declare module 'fastify' {
  // The body exactly as received: signatures (git webhooks) and idempotency keys hash it.
  interface FastifyRequest { rawBody?: string }
}

export function installJsonParser(app: FastifyInstance) {
  // A route that takes no body refuses one, as it refuses unknown fields: a typo never
  // silently does nothing. An empty object is tolerated (many clients send `{}`).
  app.addHook('preValidation', async (req) => {
    if (req.routeOptions.schema?.body || req.body === undefined || req.body === null) return;
    const b = req.body;
    if (typeof b === 'object' && !Array.isArray(b)) {
      const keys = Object.keys(b);
      if (keys.length === 0) return;
      throw new AppError(422, 'unknown_field', 'Unprocessable content', `This endpoint takes no body: ${keys.map((k) => `unknown field "${k}"`).join(', ')}.`,
        keys.map((k) => ({ path: k, message: `unknown field "${k}"` })));
    }
    throw new AppError(422, 'body_not_allowed', 'Unprocessable content', 'This endpoint takes no body.', [{ path: '', message: 'no body expected' }]);
  });
  app.removeContentTypeParser(['application/json']);
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json$/i, { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    req.rawBody = text;
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
    } catch {
      return done(new AppError(400, 'invalid_json', 'Bad request', 'The body is not valid JSON.'), undefined);
    }
    const problem = problemIn(value);
    if (problem === 'nul') return done(new AppError(422, 'invalid_character', 'Unprocessable content', 'Strings must not contain NUL characters.'), undefined);
    if (problem === 'depth') return done(new AppError(422, 'too_deep', 'Unprocessable content', `JSON nested deeper than ${MAX_DEPTH} levels is not accepted.`), undefined);
    done(null, value);
  });
}

const MAX_DEPTH = 32;

/** Walks the value without recursion: NUL in any string or key, or nesting deeper than we accept. */
function problemIn(value: unknown): 'nul' | 'depth' | undefined {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') { if (v.includes('\u0000')) return 'nul'; continue; }
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) return 'depth';
    for (const [k, x] of Object.entries(v)) {
      if (k.includes('\u0000')) return 'nul';
      stack.push([x, depth + 1]);
    }
  }
  return undefined;
}
