// Idempotency-Key on every POST (like Stripe): the first answer to a key is kept for 24 hours
// of service time and replayed for a retry with the same body; the same key with another body
// is 422; a retry while the first is still running is 409. 5xx answers are not kept, so a retry
// after a failure runs again.
//
// Secrets are never kept here. A route whose success answer carries a secret shown once (a
// session or personal token, an agent token, a webhook secret) says so in its config
// (`secretAnswer`, with a hint for a client that lost the answer). Its success answer is recorded
// without a body, and a replay is 409 `idempotent_secret_not_replayed`: the first answer was
// delivered, the secret is not kept, and showing it again would break "shown once". As a net
// under the declarations, any answer holding a secret-shaped value (fp_, fpa_, whsec_, inv_
// followed by 256 random bits) is treated the same way and logged as undeclared. The request
// hash is keyed with the service's secret key, so a login body's password cannot be guessed
// from it either.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { SECRET_SHAPE, type Sealer } from '../secrets.ts';
import { AppError } from '../errors.ts';
import { claimKey, findRecord, recordAnswer, releaseKey } from './idempotency-dal.ts';

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { scope: string; key: string };
  }
  interface FastifyContextConfig {
    /**
     * The success answer carries a secret shown once: an Idempotency-Key replay refuses it
     * (409 idempotent_secret_not_replayed). The text tells a client whose first answer was lost
     * what to do instead.
     */
    secretAnswer?: string;
  }
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const KEPT_HEADERS = ['content-type', 'location', 'etag'];
const ABANDONED_MS = 60_000; // an unfinished first attempt older than this lost its process

/** `POST /url` of every route that declares a secret answer, per application (for tests). */
const declared = new WeakMap<FastifyInstance, Set<string>>();
export function secretAnswerRoutes(app: FastifyInstance): string[] {
  return [...(declared.get(app) ?? [])].sort();
}

function scopeOf(req: FastifyRequest): string {
  if (req.actor) return `user:${req.actor.userId}`;
  if (req.agent) return `agent:${req.agent.id}`;
  return `ip:${req.ip}`;
}

export function installIdempotency(
  app: FastifyInstance,
  db: Database,
  clock: Clock,
  hours: number,
  sealer: Sealer,
) {
  const routes = new Set<string>();
  declared.set(app, routes);
  app.addHook('onRoute', (route) => {
    if (!route.config?.secretAnswer) return;
    for (const m of [route.method].flat()) routes.add(`${m} ${route.url}`);
  });

  /** Claims the key, or answers from its record: true when it answered (a replay). */
  async function claimOrReplay(req: FastifyRequest, reply: FastifyReply, key: string) {
    if (!KEY.test(key))
      throw new AppError(
        400,
        'invalid_idempotency_key',
        'Bad request',
        'Idempotency-Key must be 1 to 255 visible ASCII characters.',
      );
    const scope = scopeOf(req);
    const hash = sealer.digest(`${req.method} ${req.url}\n${req.rawBody ?? ''}`);
    const now = clock.now();
    const fresh = new Date(now.getTime() - hours * 3600_000);
    // Take the key over only when the old record expired or its first attempt was abandoned.
    const claimed = await claimKey(
      db,
      { scope, key },
      hash,
      now,
      fresh,
      new Date(now.getTime() - ABANDONED_MS),
    );
    if (claimed) {
      req.idempotency = { scope, key };
      return false;
    }
    const prior = await findRecord(db, { scope, key });
    if (prior.request_hash !== hash) {
      throw new AppError(
        422,
        'idempotency_key_reused',
        'Unprocessable content',
        'This Idempotency-Key was used with another request; use a new key.',
      );
    }
    if (prior.status === null) {
      throw new AppError(
        409,
        'idempotency_in_progress',
        'Conflict',
        'The first request with this Idempotency-Key is still running.',
        undefined,
        { 'retry-after': '1' },
      );
    }
    if (prior.body === null) {
      // A finished answer without a body is one whose secret was withheld (see onSend).
      const hint = req.routeOptions.config?.secretAnswer;
      throw new AppError(
        409,
        'idempotent_secret_not_replayed',
        'Conflict',
        `The first request with this Idempotency-Key succeeded (${prior.status}) and its answer was delivered then. ` +
          'That answer held a secret that is shown once and not kept, so it is not replayed.' +
          (hint ? ` ${hint}` : ''),
      );
    }
    const headers = (prior.headers ?? {}) as Record<string, string>;
    reply
      .code(prior.status)
      .headers({ ...headers, 'idempotent-replayed': 'true' })
      .send(prior.body);
    return true;
  }

  // Both hooks run on every request, the 404 handler's included; they are synchronous, so a
  // request without a key (every GET) pays a function call, not a promise and a microtask.
  app.addHook('preHandler', (req, reply, done) => {
    const key = req.headers['idempotency-key'];
    if (req.method !== 'POST' || typeof key !== 'string') return done();
    // A replay has answered: the route must not run, so the chain is not continued.
    claimOrReplay(req, reply, key).then((replied) => replied || done(), done);
  });

  async function keepAnswer(
    req: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    claim: { scope: string; key: string },
  ) {
    if (
      reply.statusCode >= 500 ||
      (typeof payload !== 'string' && payload !== null && payload !== undefined)
    ) {
      await releaseKey(db, claim);
      return;
    }
    const body = (payload as string | null) ?? '';
    const declaredSecret = Boolean(req.routeOptions.config?.secretAnswer) && reply.statusCode < 300;
    const shapedSecret = SECRET_SHAPE.test(body);
    if (shapedSecret && !declaredSecret) {
      req.log.error(
        { route: `${req.method} ${req.routeOptions.url}` },
        'answer holds a secret but its route does not declare config.secretAnswer; not kept for replay',
      );
    }
    const headers = Object.fromEntries(
      KEPT_HEADERS.map((h) => [h, reply.getHeader(h)])
        .filter(([, v]) => v !== undefined)
        .map(([h, v]) => [h, String(v)]),
    );
    await recordAnswer(db, claim, {
      status: reply.statusCode,
      headers,
      body: declaredSecret || shapedSecret ? null : body,
    });
  }

  app.addHook('onSend', (req, reply, payload, done) => {
    const claim = req.idempotency;
    if (!claim) return done(null, payload);
    req.idempotency = undefined;
    keepAnswer(req, reply, payload, claim).then(() => done(null, payload), done);
  });
}
