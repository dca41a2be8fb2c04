// JSON bodies: parsed with prototype-poisoning protection; an empty body counts as no body
// (clients often send Content-Type: application/json on a bodiless POST). Strings PostgreSQL
// text cannot hold (NUL, unpaired UTF-16 surrogates) are refused here, naming the field. Only
// JSON is parsed: any other content type, text/plain included, is 400.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError, type FieldError } from '../errors.ts';

declare module 'fastify' {
  // The body exactly as received: signatures (git webhooks) and idempotency keys hash it.
  interface FastifyRequest {
    rawBody?: string;
  }
}

export function installJsonParser(app: FastifyInstance) {
  // A route that takes no body refuses one, as it refuses unknown fields: a typo never
  // silently does nothing. An empty object is tolerated (many clients send `{}`).
  // Synchronous: on every request without a body (every GET) it costs a function call.
  app.addHook('preValidation', (req, _reply, done) => {
    // is404: the not-found handler has no schema either, and must stay a 404.
    if (req.is404 || req.routeOptions.schema?.body || req.body === undefined || req.body === null)
      return done();
    const b = req.body;
    if (typeof b === 'object' && !Array.isArray(b)) {
      const keys = Object.keys(b);
      if (keys.length === 0) return done();
      return done(
        new AppError(
          422,
          'unknown_field',
          'Unprocessable content',
          `This endpoint takes no body: ${keys.map((k) => `unknown field "${k}"`).join(', ')}.`,
          keys.map((k) => ({ path: k, message: `unknown field "${k}"` })),
        ),
      );
    }
    done(
      new AppError(
        422,
        'body_not_allowed',
        'Unprocessable content',
        'This endpoint takes no body.',
        [{ path: '', message: 'no body expected' }],
      ),
    );
  });
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json$/i,
    { parseAs: 'string' },
    (req, body, done) => {
      const text = body as string;
      req.rawBody = text;
      if (text.trim() === '') return done(null, undefined);
      let value: unknown;
      try {
        value = secureJson.parse(text, undefined, {
          protoAction: 'error',
          constructorAction: 'error',
        });
      } catch {
        return done(
          new AppError(400, 'invalid_json', 'Bad request', 'The body is not valid JSON.'),
          undefined,
        );
      }
      const problem = problemIn(value);
      if (problem?.kind === 'character') {
        return done(
          new AppError(
            422,
            'invalid_character',
            'Unprocessable content',
            'Strings must not contain NUL characters or unpaired surrogates.',
            [
              {
                path: problem.path,
                message: 'must not contain NUL characters or unpaired surrogates',
              },
            ],
          ),
          undefined,
        );
      }
      if (problem?.kind === 'depth') {
        return done(
          new AppError(
            422,
            'too_deep',
            'Unprocessable content',
            `JSON nested deeper than ${MAX_DEPTH} levels is not accepted.`,
            [{ path: problem.path, message: `nests deeper than ${MAX_DEPTH} levels` }],
          ),
          undefined,
        );
      }
      done(null, value);
    },
  );
}

const MAX_DEPTH = 32;

// With the u flag a valid surrogate pair is one code point: only unpaired halves match \p{Cs}.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused.
const BAD_CHARACTER = /[\u0000\p{Cs}]/u;

/** Walks the value without recursion: a bad character in a string or key, or too deep a nesting, with where. */
function problemIn(
  value: unknown,
): { kind: 'character' | 'depth'; path: FieldError['path'] } | undefined {
  const stack: Array<[unknown, number, string]> = [[value, 0, '']];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth, path] = top;
    if (typeof v === 'string') {
      if (BAD_CHARACTER.test(v)) return { kind: 'character', path };
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) return { kind: 'depth', path };
    for (const [k, x] of Object.entries(v)) {
      const at = path ? `${path}.${k}` : k;
      if (BAD_CHARACTER.test(k)) return { kind: 'character', path: at };
      stack.push([x, depth + 1, at]);
    }
  }
  return undefined;
}
