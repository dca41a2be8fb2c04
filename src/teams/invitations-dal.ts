// Invitations and the log of invitation e-mails: every statement of invitations-service and
// invitation-proof. The service owns the transactions and the rules; these only read and write.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { Role } from '../db/schema.ts';

export type InvitationRow = NonNullable<Awaited<ReturnType<typeof invitationById>>>;

export function invitationById(q: Queryable, teamId: string, id: string) {
  return q
    .selectFrom('invitations')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The same row, locked until the transaction ends: changes of one invitation queue up. */
export function invitationForUpdate(q: Queryable, teamId: string, id: string) {
  return q
    .selectFrom('invitations')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** The invitation behind a token, with the kind of what it invites to (a team or an org). */
export function invitationByToken(q: Queryable, tokenHash: Buffer) {
  return q
    .selectFrom('invitations as i')
    .innerJoin('teams as t', 't.id', 'i.team_id')
    .selectAll('i')
    .select('t.kind')
    .where('i.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** A team's invitations, for paging by id (db/paging.ts). */
export function invitationsOfTeam(q: Queryable, teamId: string) {
  return q.selectFrom('invitations').selectAll().where('team_id', '=', teamId);
}

/** The member of the team whose account holds `email`, if any. */
export function memberWithEmail(q: Queryable, teamId: string, email: string) {
  return q
    .selectFrom('team_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select('m.user_id')
    .where('m.team_id', '=', teamId)
    .where('u.email', '=', email)
    .executeTakeFirst();
}

/** Closes the team's expired, still open invitations to `email`. */
export async function closeExpired(q: Queryable, teamId: string, email: string, now: Date) {
  await q
    .updateTable('invitations')
    .set({ closed_at: now })
    .where('team_id', '=', teamId)
    .where('email', '=', email)
    .where('closed_at', 'is', null)
    .where('expires_at', '<=', now)
    .execute();
}

export interface NewInvitation {
  id: string;
  team_id: string;
  email: string;
  role: Role;
  token_hash: Buffer;
  invited_by: string;
  created_at: Date;
  expires_at: Date;
}

export function insertInvitation(q: Queryable, values: NewInvitation) {
  return q.insertInto('invitations').values(values).returningAll().executeTakeFirstOrThrow();
}

export async function setToken(q: Queryable, id: string, tokenHash: Buffer, expiresAt: Date) {
  await q
    .updateTable('invitations')
    .set({ token_hash: tokenHash, expires_at: expiresAt })
    .where('id', '=', id)
    .execute();
}

export async function markRevoked(q: Queryable, id: string, now: Date, closedAt: Date) {
  await q
    .updateTable('invitations')
    .set({ revoked_at: now, closed_at: closedAt })
    .where('id', '=', id)
    .execute();
}

/**
 * Marks the invitation behind the token accepted, if it is still open; undefined otherwise.
 * One statement, so of two concurrent accepts only the first finds the row open.
 */
export function acceptOpen(
  q: Queryable,
  tokenHash: Buffer,
  userId: string,
  now: Date,
  kind: 'team' | 'org',
) {
  return q
    .updateTable('invitations')
    .set({ accepted_at: now, accepted_by: userId, closed_at: now })
    .where('token_hash', '=', tokenHash)
    .where('team_id', 'in', (eb) => eb.selectFrom('teams').select('id').where('kind', '=', kind))
    .where('closed_at', 'is', null)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('declined_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Marks the invitation declined if it is still open; false if it was not. */
export async function declineOpen(q: Queryable, id: string, now: Date) {
  const res = await q
    .updateTable('invitations')
    .set({ declined_at: now, closed_at: now })
    .where('id', '=', id)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/**
 * Verifies the address of the account `userId` if it still holds `email` (a row lock on the
 * user); undefined if the address went to another account.
 */
export function verifyHolder(q: Queryable, userId: string, email: string, now: Date) {
  return q
    .updateTable('users')
    .set({ email_verified_at: sql`coalesce(email_verified_at, ${now})` })
    .where('id', '=', userId)
    .where('email', '=', email)
    .returning('id')
    .executeTakeFirst();
}

/** What the e-mail names: the team or org (and which it is) and who invited. */
export function teamName(q: Queryable, teamId: string) {
  return q
    .selectFrom('teams')
    .select(['name', 'kind'])
    .where('id', '=', teamId)
    .executeTakeFirstOrThrow();
}

export function inviter(q: Queryable, userId: string) {
  return q
    .selectFrom('users')
    .select(['name', 'email'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
}

/** What the invitation page shows about the invitation behind a token. */
export function preview(q: Queryable, tokenHash: Buffer) {
  return q
    .selectFrom('invitations as i')
    .innerJoin('teams as t', 't.id', 'i.team_id')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .select([
      'i.id',
      'i.email',
      'i.role',
      'i.expires_at',
      'i.accepted_at',
      'i.revoked_at',
      'i.declined_at',
      't.name as team_name',
      't.slug as team_slug',
      't.kind',
      'u.name as inviter_name',
    ])
    .where('i.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

// Advisory lock classes (the two-int form, apart from migrate.ts's one-bigint lock);
// identity/address-claims.ts uses 1211.
const LOCK_TEAM_MAIL = 1209;
const LOCK_ADDRESS_MAIL = 1210;

/** Locks the mail logs of a team and of an address until the transaction ends, team first. */
export async function lockMailLogs(q: Queryable, teamId: string, email: string) {
  await sql`select pg_advisory_xact_lock(${LOCK_TEAM_MAIL}, hashtext(${teamId}))`.execute(q);
  await sql`select pg_advisory_xact_lock(${LOCK_ADDRESS_MAIL}, hashtext(${email}))`.execute(q);
}

/** When the `n`-th newest e-mail logged for a team or an address since `since` was sent. */
export async function nthSentSince(
  q: Queryable,
  column: 'team_id' | 'email',
  value: string,
  n: number,
  since: Date,
) {
  const row = await q
    .selectFrom('invitation_emails')
    .select('sent_at')
    .where(column, '=', value)
    .where('sent_at', '>', since)
    .orderBy('sent_at', 'desc')
    .offset(n - 1)
    .limit(1)
    .executeTakeFirst();
  return row?.sent_at;
}

/** Drops the log rows of a team or an address sent at or before `before`. */
export async function pruneMailLog(q: Queryable, teamId: string, email: string, before: Date) {
  await q
    .deleteFrom('invitation_emails')
    .where('sent_at', '<=', before)
    .where((eb) => eb.or([eb('team_id', '=', teamId), eb('email', '=', email)]))
    .execute();
}

export async function logMail(
  q: Queryable,
  m: { teamId: string; email: string; invitationId: string; sentAt: Date },
) {
  await q
    .insertInto('invitation_emails')
    .values({
      team_id: m.teamId,
      email: m.email,
      invitation_id: m.invitationId,
      sent_at: m.sentAt,
    })
    .execute();
}

/** The caller's address once proven, its row held until the transaction ends: a take-over of
 *  the address (identity/address-claims.ts) waits for an answer given under it, or goes first. */
export async function provenAddress(q: Queryable, userId: string) {
  const row = await q
    .selectFrom('users')
    .select('email')
    .where('id', '=', userId)
    .where('email_verified_at', 'is not', null)
    .forShare()
    .executeTakeFirst();
  return row?.email;
}

/**
 * Accepts or declines, by id, an invitation to `email` that is still open at `now`; the row, or
 * undefined. One statement, so of two concurrent answers only the first finds the row open.
 */
export function answerOpen(
  q: Queryable,
  a: { id: string; email: string; userId: string; now: Date; accept: boolean },
) {
  const { now } = a;
  return q
    .updateTable('invitations')
    .set(
      a.accept
        ? { accepted_at: now, accepted_by: a.userId, closed_at: now }
        : { declined_at: now, closed_at: now },
    )
    .where('id', '=', a.id)
    .where('email', '=', a.email)
    .where('closed_at', 'is', null)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('declined_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}
