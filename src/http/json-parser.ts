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
    if (hasNul(value)) {
      return done(new AppError(422, 'invalid_character', 'Unprocessable content', 'Strings must not contain NUL characters.'), undefined);
    }
    done(null, value);
  });
}

function hasNul(v: unknown): boolean {
  if (typeof v === 'string') return v.includes('\u0000');
  if (Array.isArray(v)) return v.some(hasNul);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => k.includes('\u0000') || hasNul(x));
  return false;
}
