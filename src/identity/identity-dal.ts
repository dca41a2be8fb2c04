import { sql } from 'kysely';
import { compiledOnce } from '../db/compiled.ts';
import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { hashSecret, newSecret } from '../secrets.ts';
import { mintToken, type Mac } from './token-format.ts';

export function userByEmail(q: Queryable, email: string) {
  return q.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function userById(q: Queryable, id: string) {
  return q.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface NewUser {
  email: string;
  name: string;
  passwordHash: string;
  now: Date;
  verifiedAt: Date | null;
}

export function insertUser(q: Queryable, u: NewUser) {
  return q
    .insertInto('users')
    .values({
      id: newId('user', u.now),
      email: u.email,
      name: u.name,
      password_hash: u.passwordHash,
      created_at: u.now,
      email_verified_at: u.verifiedAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A new bearer token: the secret is returned once, only its hash is stored. */
export interface NewToken {
  userId: string;
  name: string;
  kind: 'session' | 'personal';
  now: Date;
  expiresAt: Date | null;
}

/** With `mac`, the token is signed (token-format.ts); without, or if it cannot be, random. */
export async function insertToken(q: Queryable, t: NewToken, mac?: Mac) {
  const id = newId('token', t.now);
  const claims = { tokenId: id, userId: t.userId, expiresAt: t.expiresAt };
  const token = (mac && mintToken(mac, claims)) ?? newSecret('fp');
  const row = await q
    .insertInto('access_tokens')
    .values({
      id,
      user_id: t.userId,
      name: t.name,
      kind: t.kind,
      token_hash: hashSecret(token),
      created_at: t.now,
      expires_at: t.expiresAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { token, row };
}

// Expiry and revocation are checked by the caller's clock. Compiled once: a caller's first
// request sends it when its token is not signed (token-format.ts) or not known to be live.
const tokenRow = compiledOnce((q, tokenHash: Uint8Array) =>
  q
    .selectFrom('access_tokens')
    .select(['id', 'user_id', 'expires_at', 'revoked_at'])
    .where('token_hash', '=', tokenHash as Buffer),
);
export const tokenByHash = async (q: Queryable, tokenHash: Buffer) =>
  (await tokenRow(q, tokenHash))[0];

/**
 * Records when tokens were last used, each at its own time, in one statement; a token whose
 * recorded use is less than `everyMs` older is left as it is (no new row version to vacuum).
 */
export async function touchTokens(
  q: Queryable,
  uses: Array<{ id: string; at: Date }>,
  everyMs: number,
) {
  await sql`update access_tokens t set last_used_at = u.at
    from unnest(${uses.map((u) => u.id)}::text[], ${uses.map((u) => u.at)}::timestamptz[])
      as u(id, at)
    where t.id = u.id
      and (t.last_used_at is null
        or t.last_used_at <= u.at - make_interval(secs => ${everyMs / 1000}))`.execute(q);
}

/** Revokes one token (of `userId`, if given); false if there was no live one. */
export async function revokeToken(q: Queryable, id: string, now: Date, userId?: string) {
  let query = q
    .updateTable('access_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('revoked_at', 'is', null);
  if (userId) query = query.where('user_id', '=', userId);
  const res = await query.executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** Revokes every live token of a user; the ids revoked. */
export async function revokeTokensOf(q: Queryable, userId: string, now: Date) {
  const rows = await q
    .updateTable('access_tokens')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** The revoked tokens that have not expired at `now`: what revocations.ts holds. */
export async function revokedTokenIds(q: Queryable, now: Date) {
  const rows = await q
    .selectFrom('access_tokens')
    .select('id')
    .where('revoked_at', 'is not', null)
    .where((w) => w.or([w('expires_at', 'is', null), w('expires_at', '>', now)]))
    .execute();
  return rows.map((r) => r.id);
}

/** Tells every instance's token cache (token-cache.ts), when the transaction commits. */
export async function notifyRevoked(q: Queryable, tokenId: string) {
  await sql`select pg_notify('frameplane_tokens', ${tokenId})`.execute(q);
}

export function listTokens(q: Queryable, userId: string, limit: number, afterId?: string) {
  let query = q
    .selectFrom('access_tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (afterId) query = query.where('id', '>', afterId);
  return query
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

type InvitationForUserRow = {
  id: string;
  team_id: string;
  email: string;
  role: Role;
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
  team_name: string;
  team_slug: string;
  kind: 'team' | 'org';
};

const INVITATION_COLUMNS = [
  'i.id',
  'i.team_id',
  'i.email',
  'i.role',
  'i.invited_by',
  'i.created_at',
  'i.expires_at',
  't.name as team_name',
  't.slug as team_slug',
  't.kind',
] as const;

/** Invitations still open at `now`, with their team's (or org's) name, slug and kind. */
function openInvitations(q: Queryable, now: Date) {
  return q
    .selectFrom('invitations as i')
    .innerJoin('teams as t', 't.id', 'i.team_id')
    .select(INVITATION_COLUMNS)
    .where('i.closed_at', 'is', null)
    .where('i.expires_at', '>', now);
}

/** Pending invitations to an address (a sign-up under SIGNUP=closed needs one). */
export function pendingInvitationsFor(q: Queryable, email: string, now: Date, limit: number) {
  return openInvitations(q, now)
    .where('i.email', '=', email)
    .orderBy('i.id')
    .limit(limit)
    .execute() as Promise<InvitationForUserRow[]>;
}

/** Pending invitations to the address a user holds, only once the user has proved it. */
export function pendingInvitationsOfUser(
  q: Queryable,
  userId: string,
  now: Date,
  limit: number,
  afterId?: string,
) {
  let query = openInvitations(q, now)
    .innerJoin('users as u', 'u.email', 'i.email')
    .where('u.id', '=', userId)
    .where('u.email_verified_at', 'is not', null);
  if (afterId) query = query.where('i.id', '>', afterId);
  return query
    .orderBy('i.id')
    .limit(limit + 1)
    .execute() as Promise<InvitationForUserRow[]>;
}
