// The SQL of Idempotency-Key (idempotency.ts): one row per (scope, key), claimed by the first
// request and filled with its answer when it is sent.
import type { Queryable } from '../db/database.ts';

export interface Claim {
  scope: string;
  key: string;
}

/**
 * Claims (scope, key) for a request whose body hashes to `hash`. An existing record is taken
 * over only when it expired (created before `freshAfter`) or its first attempt was abandoned
 * (no answer, created before `abandonedBefore`). Returns whether the claim is ours.
 */
export async function claimKey(
  db: Queryable,
  claim: Claim,
  hash: string,
  now: Date,
  freshAfter: Date,
  abandonedBefore: Date,
): Promise<boolean> {
  const row = await db
    .insertInto('idempotency_keys')
    .values({ ...claim, request_hash: hash, created_at: now })
    .onConflict((oc) =>
      oc
        .columns(['scope', 'key'])
        .doUpdateSet({
          request_hash: hash,
          status: null,
          headers: null,
          body: null,
          created_at: now,
        })
        .where((eb) =>
          eb.or([
            eb('idempotency_keys.created_at', '<', freshAfter),
            eb.and([
              eb('idempotency_keys.status', 'is', null),
              eb('idempotency_keys.created_at', '<', abandonedBefore),
            ]),
          ]),
        ),
    )
    .returning('key')
    .executeTakeFirst();
  return row !== undefined;
}

export function findRecord(db: Queryable, claim: Claim) {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .executeTakeFirstOrThrow();
}

/** Gives the key up (a 5xx or a streamed answer is not kept), so a retry runs again. */
export async function releaseKey(db: Queryable, claim: Claim) {
  await db
    .deleteFrom('idempotency_keys')
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .execute();
}

/** Keeps the answer for replay; `body` null marks an answer whose secret was withheld. */
export async function recordAnswer(
  db: Queryable,
  claim: Claim,
  answer: { status: number; headers: Record<string, string>; body: string | null },
) {
  await db
    .updateTable('idempotency_keys')
    .set({ status: answer.status, headers: JSON.stringify(answer.headers), body: answer.body })
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .execute();
}
