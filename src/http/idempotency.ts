// Idempotency-Key on every POST (like Stripe): the first answer to a key is kept for 24 hours
// of service time and replayed for a retry with the same body; the same key with another body
// is 422; a retry while the first is still running is 409. 5xx answers are not kept, so a retry
// after a failure runs again.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { AppError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest { idempotency?: { scope: string; key: string } }
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const KEPT_HEADERS = ['content-type', 'location', 'etag'];
const ABANDONED_MS = 60_000; // an unfinished first attempt older than this lost its process

function scopeOf(req: FastifyRequest): string {
  if (req.actor) return `user:${req.actor.userId}`;
  if (req.agent) return `agent:${req.agent.id}`;
  return `ip:${req.ip}`;
}

export function installIdempotency(app: FastifyInstance, db: Database, clock: Clock, hours: number) {
  app.addHook('preHandler', async (req, reply) => {
    const key = req.headers['idempotency-key'];
    if (req.method !== 'POST' || typeof key !== 'string') return;
    if (!KEY.test(key)) throw new AppError(400, 'invalid_idempotency_key', 'Bad request', 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
    const scope = scopeOf(req);
    const hash = createHash('sha256').update(`${req.method} ${req.url}\n${req.rawBody ?? ''}`).digest('base64url');
    const now = clock.now();
    const fresh = new Date(now.getTime() - hours * 3600_000);
    const claimed = await db.insertInto('idempotency_keys').values({ scope, key, request_hash: hash, created_at: now })
      .onConflict((oc) => oc.columns(['scope', 'key']).doUpdateSet({ request_hash: hash, status: null, headers: null, body: null, created_at: now })
        // Take the key over only when the old record expired or its first attempt was abandoned.
        .where((eb) => eb.or([eb('idempotency_keys.created_at', '<', fresh),
          eb.and([eb('idempotency_keys.status', 'is', null), eb('idempotency_keys.created_at', '<', new Date(now.getTime() - ABANDONED_MS))])])))
      .returning('key').executeTakeFirst();
    if (claimed) { req.idempotency = { scope, key }; return; }
    const prior = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('key', '=', key).executeTakeFirstOrThrow();
    if (prior.request_hash !== hash) {
      throw new AppError(422, 'idempotency_key_reused', 'Unprocessable content', 'This Idempotency-Key was used with another request; use a new key.');
    }
    if (prior.status === null) {
      throw new AppError(409, 'idempotency_in_progress', 'Conflict', 'The first request with this Idempotency-Key is still running.', undefined, { 'retry-after': '1' });
    }
    const headers = (prior.headers ?? {}) as Record<string, string>;
    return reply.code(prior.status).headers({ ...headers, 'idempotent-replayed': 'true' }).send(prior.body ?? '');
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const claim = req.idempotency;
    if (!claim) return payload;
    req.idempotency = undefined;
    const where = (q: any) => q.where('scope', '=', claim.scope).where('key', '=', claim.key);
    if (reply.statusCode >= 500 || (typeof payload !== 'string' && payload !== null && payload !== undefined)) {
      await where(db.deleteFrom('idempotency_keys')).execute();
      return payload;
    }
    const headers = Object.fromEntries(KEPT_HEADERS.map((h) => [h, reply.getHeader(h)]).filter(([, v]) => v !== undefined).map(([h, v]) => [h, String(v)]));
    await where(db.updateTable('idempotency_keys').set({ status: reply.statusCode, headers: JSON.stringify(headers), body: (payload as string | null) ?? '' })).execute();
    return payload;
  });
}
