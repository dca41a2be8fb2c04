// Who holds an address, and the verification links that prove one: the statements of
// address-claims.ts and of signup-service's link handling.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

// Advisory lock class (two-int form) of an address; 1209 and 1210 are the invitation mail
// logs' (teams/invitations-dal.ts).
const LOCK_ADDRESS = 1211;

/** Takes the address's advisory lock until the transaction ends. */
export async function lockAddress(q: Queryable, email: string) {
  await sql`select pg_advisory_xact_lock(${LOCK_ADDRESS}, hashtext(${email}))`.execute(q);
}

/** The account holding `email`, row-locked until the transaction ends. */
export function holderForUpdate(q: Queryable, email: string) {
  return q
    .selectFrom('users')
    .select(['id', 'email_verified_at'])
    .where('email', '=', email)
    .forUpdate()
    .executeTakeFirst();
}

/** Gives the account another address and marks it unproven. */
export async function moveToAddress(q: Queryable, userId: string, email: string) {
  await q
    .updateTable('users')
    .set({ email, email_verified_at: null })
    .where('id', '=', userId)
    .execute();
}

/**
 * Marks the account's address proven if it still holds `email`; the updated user, or
 * undefined if the address went to another account.
 */
export function verifyHolder(q: Queryable, userId: string, email: string, now: Date) {
  return q
    .updateTable('users')
    .set({ email_verified_at: sql`coalesce(email_verified_at, ${now})` })
    .where('id', '=', userId)
    .where('email', '=', email)
    .returningAll()
    .executeTakeFirst();
}

export interface NewLink {
  email: string;
  user_id: string | null;
  password_hash: string | null;
  name: string | null;
  token_hash: Buffer;
  created_at: Date;
  expires_at: Date;
}

export async function insertLink(q: Queryable, values: NewLink) {
  await q.insertInto('email_verifications').values(values).execute();
}

/** Deletes the address's links that expired before `before`. */
export async function deleteLinksExpiredBefore(q: Queryable, email: string, before: Date) {
  await q
    .deleteFrom('email_verifications')
    .where('email', '=', email)
    .where('expires_at', '<', before)
    .execute();
}

export function linkByToken(q: Queryable, tokenHash: Buffer) {
  return q
    .selectFrom('email_verifications')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Marks the link used if it was not; false if it was. One statement: only one use wins. */
export async function claimLink(q: Queryable, id: number, now: Date) {
  const row = await q
    .updateTable('email_verifications')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Ties a sign-up's link to the account it became and forgets the password hash it held. */
export async function attachLink(q: Queryable, id: number, userId: string) {
  await q
    .updateTable('email_verifications')
    .set({ user_id: userId, password_hash: null })
    .where('id', '=', id)
    .execute();
}
