// Security headers on every answer: helmet's defaults (CSP, HSTS, nosniff, frame options,
// referrer policy, cross-origin policies), with our CSP. They do not depend on the request, so
// helmet runs once, at start-up, against a response that records what it sets, and each
// request gets the recorded list. (@fastify/helmet built helmet's middleware again on every
// request, parsing the CSP each time, in two hooks: about a tenth of a read's own CPU.) A
// directive given as a function (a per-request nonce) could not be recorded: none is.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/** The headers helmet sets with these options, in its order, names in lower case. */
export function securityHeaders(options: HelmetOptions): Array<[string, string]> {
  const set = new Map<string, string>();
  const recorder = {
    setHeader(name: string, value: unknown) {
      set.set(name.toLowerCase(), String(value));
    },
    // helmet removes X-Powered-By, which neither Node nor Fastify sets.
    removeHeader(name: string) {
      set.delete(name.toLowerCase());
    },
  };
  let failed: unknown;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err) => {
    failed = err;
  });
  if (failed) throw failed;
  return [...set];
}

/**
 * Sets the headers first thing, as @fastify/helmet did: an answer of any route, error or 404
 * carries them, and a route that sets one of them itself (the API reference's CSP) overrides
 * it. On the reply, not the raw response: Node keeps raw headers as an array per header and
 * copies Fastify's into them one by one, while headers only Fastify holds go to writeHead in
 * one object. The raw calls were 7 % of what a read allocated (the bench's allocation profile).
 */
export function installSecurityHeaders(app: FastifyInstance, options: HelmetOptions) {
  const headers = securityHeaders(options);
  app.addHook('onRequest', (_req, reply, done) => {
    for (const [name, value] of headers) reply.header(name, value);
    done();
  });
}
