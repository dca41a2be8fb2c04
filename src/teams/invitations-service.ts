// Invitations (spec 2 and 4, CONTRACT 4): a token of 256 random bits that lives only in the
// e-mail (stored as a hash), 7 days of service clock, single use, e-mail matched
// case-insensitively. The row, its audit record and its e-mail commit together.
import { sql } from 'kysely';
import type { Database, Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { addDays } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Role } from '../access/roles.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { Sealer } from '../secrets.ts';
import { hashSecret, newSecret } from '../secrets.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { enqueueEmail } from '../mail/outbox.ts';
import { invitationEmail } from '../mail/templates.ts';
import { AppError, conflict, forbidden, notFound } from '../http/errors.ts';
import { iso } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { normalizeEmail } from '../identity/identity-service.ts';
import { presentMember, refuseOwnerRole } from './members-service.ts';
import { INVITATION_DAYS, invitationStatus } from './invitation-status.ts';
import { usableInvitation } from './invitation-proof.ts';
import * as teams from './teams-dal.ts';
import { pageById } from '../db/paging.ts';

type InvitationRow = Awaited<ReturnType<typeof byId>> & {};

function byId(q: Queryable, teamId: string, id: string) {
  return q
    .selectFrom('invitations')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** How many invitation e-mails may go out: per team in any hour, per address in any 24 hours. */
export interface InvitationMailLimits {
  perTeamHour: number;
  perAddressDay: number;
}

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
// Advisory lock classes (the two-int form, apart from migrate.ts's one-bigint lock).
const LOCK_TEAM_MAIL = 1209;
const LOCK_ADDRESS_MAIL = 1210;

/** A name stored before names were checked may hold line breaks or other controls: an e-mail
 *  shows it on one line. (Names are refused with them now: PLAIN_TEXT_PATTERN.) */
// eslint-disable-next-line no-control-regex
const oneLine = (s: string) =>
  s
    .replace(
      /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g,
      ' ',
    )
    .trim();

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  sealer: Sealer;
  limiter: RateLimiter;
  publicUrl: string;
  acceptsPerIp: number;
  mailLimits: InvitationMailLimits;
}

export function createInvitationsService({
  db,
  clock,
  access,
  sealer,
  limiter,
  publicUrl,
  acceptsPerIp,
  mailLimits,
}: Deps) {
  const present = (i: NonNullable<InvitationRow>) => ({
    id: i.id,
    team_id: i.team_id,
    email: i.email,
    role: i.role,
    status: invitationStatus(i, clock.now()),
    invited_by: i.invited_by,
    created_at: iso(i.created_at),
    expires_at: iso(i.expires_at),
  });

  /**
   * When the `limit`-th newest e-mail of a log still inside its window leaves it (the log is then
   * under the limit), or undefined if the log is under the limit now.
   */
  async function fullUntil(
    trx: Queryable,
    column: 'team_id' | 'email',
    value: string,
    limit: number,
    windowMs: number,
    now: Date,
  ) {
    const row = await trx
      .selectFrom('invitation_emails')
      .select('sent_at')
      .where(column, '=', value)
      .where('sent_at', '>', new Date(now.getTime() - windowMs))
      .orderBy('sent_at', 'desc')
      .offset(limit - 1)
      .limit(1)
      .executeTakeFirst();
    return row ? new Date(row.sent_at.getTime() + windowMs) : undefined;
  }

  /**
   * Counts one invitation e-mail against its team (per hour) and its address (per 24 hours, all
   * teams), or refuses it with 429. In the caller's transaction, under advisory locks taken team
   * first, so that concurrent sends cannot both see room for one more, and a send that rolls back
   * is not counted. Sliding windows: Retry-After is exactly when the next e-mail may go.
   */
  async function countMail(
    trx: Queryable,
    invitation: { id: string; team_id: string; email: string },
    now: Date,
  ) {
    await sql`select pg_advisory_xact_lock(${LOCK_TEAM_MAIL}, hashtext(${invitation.team_id}))`.execute(
      trx,
    );
    await sql`select pg_advisory_xact_lock(${LOCK_ADDRESS_MAIL}, hashtext(${invitation.email}))`.execute(
      trx,
    );
    const team = await fullUntil(
      trx,
      'team_id',
      invitation.team_id,
      mailLimits.perTeamHour,
      HOUR_MS,
      now,
    );
    const address = await fullUntil(
      trx,
      'email',
      invitation.email,
      mailLimits.perAddressDay,
      DAY_MS,
      now,
    );
    if (team || address) {
      const until = new Date(Math.max(team?.getTime() ?? 0, address?.getTime() ?? 0));
      const seconds = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
      const why = [
        team && `this team has sent ${mailLimits.perTeamHour} invitation e-mails in the last hour`,
        address &&
          `${invitation.email} has been sent ${mailLimits.perAddressDay} invitation e-mails in the last 24 hours`,
      ]
        .filter(Boolean)
        .join(', and ');
      throw new AppError(
        429,
        'rate_limited',
        'Too many requests',
        `No invitation e-mail was sent: ${why}, the most allowed. Try again after ${iso(until)} (in ${seconds} seconds).`,
        undefined,
        { 'retry-after': String(seconds) },
      );
    }
    // Past the longest window a row counts for nothing: the log of a team or address stays small.
    await trx
      .deleteFrom('invitation_emails')
      .where('sent_at', '<=', new Date(now.getTime() - DAY_MS))
      .where((eb) =>
        eb.or([eb('team_id', '=', invitation.team_id), eb('email', '=', invitation.email)]),
      )
      .execute();
    await trx
      .insertInto('invitation_emails')
      .values({
        team_id: invitation.team_id,
        email: invitation.email,
        invitation_id: invitation.id,
        sent_at: now,
      })
      .execute();
  }

  /** Issues a fresh token and queues its e-mail, inside the caller's transaction. */
  async function sendToken(
    trx: Queryable,
    actor: Actor,
    invitation: { id: string; team_id: string; email: string; role: Role },
    now: Date,
  ) {
    await countMail(trx, invitation, now);
    const token = newSecret('inv');
    const expiresAt = addDays(now, INVITATION_DAYS);
    await trx
      .updateTable('invitations')
      .set({ token_hash: hashSecret(token), expires_at: expiresAt })
      .where('id', '=', invitation.id)
      .execute();
    const team = await trx
      .selectFrom('teams')
      .select('name')
      .where('id', '=', invitation.team_id)
      .executeTakeFirstOrThrow();
    const inviter = await trx
      .selectFrom('users')
      .select(['name', 'email'])
      .where('id', '=', actor.userId)
      .executeTakeFirstOrThrow();
    await enqueueEmail(trx, sealer, now, {
      to: invitation.email,
      ...invitationEmail({
        teamName: oneLine(team.name),
        role: invitation.role,
        inviterName: oneLine(inviter.name) || inviter.email,
        to: invitation.email,
        link: `${publicUrl}/invitations/${encodeURIComponent(token)}`,
        expiresAt,
      }),
    });
  }

  /** The invitation behind a token, checked for use; the caller's e-mail is compared if given. */
  const usable = (token: string, email: string | undefined, q: Queryable = db) =>
    usableInvitation(
      q,
      token,
      email === undefined ? undefined : normalizeEmail(email),
      clock.now(),
    );

  return {
    async list(actor: Actor, teamId: string, limit: number, cursor?: string) {
      await access.requireTeam(actor.userId, teamId, 'invitations.manage');
      return pageById(
        db.selectFrom('invitations').selectAll().where('team_id', '=', teamId),
        limit,
        cursor,
        present,
      );
    },

    async create(actor: Actor, teamId: string, input: { email: string; role: Role }) {
      await access.requireTeam(actor.userId, teamId, 'invitations.manage');
      refuseOwnerRole(input.role);
      const email = normalizeEmail(input.email);
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        const already = await trx
          .selectFrom('team_members as m')
          .innerJoin('users as u', 'u.id', 'm.user_id')
          .select('m.user_id')
          .where('m.team_id', '=', teamId)
          .where('u.email', '=', email)
          .executeTakeFirst();
        if (already)
          throw conflict(
            'already_member',
            'That address belongs to a member of this team already.',
          );
        // An expired invitation to the same address gives way to the new one.
        await trx
          .updateTable('invitations')
          .set({ closed_at: now })
          .where('team_id', '=', teamId)
          .where('email', '=', email)
          .where('closed_at', 'is', null)
          .where('expires_at', '<=', now)
          .execute();
        const inv = await trx
          .insertInto('invitations')
          .values({
            id: newId('invitation', now),
            team_id: teamId,
            email,
            role: input.role,
            token_hash: hashSecret(newSecret('inv')),
            invited_by: actor.userId,
            created_at: now,
            expires_at: addDays(now, INVITATION_DAYS),
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await sendToken(trx, actor, inv, now);
        await recordAudit(trx, actor, now, {
          teamId,
          action: 'invitation.created',
          targetType: 'invitation',
          targetId: inv.id,
          after: { email, role: inv.role },
        });
        return present(inv);
      });
    },

    async revoke(actor: Actor, teamId: string, invitationId: string) {
      await access.requireTeam(actor.userId, teamId, 'invitations.manage');
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        const inv = await trx
          .selectFrom('invitations')
          .selectAll()
          .where('team_id', '=', teamId)
          .where('id', '=', invitationId)
          .forUpdate()
          .executeTakeFirst();
        if (!inv) throw notFound('invitation');
        if (inv.accepted_at)
          throw conflict(
            'invitation_used',
            'An accepted invitation cannot be taken back; remove the member instead.',
          );
        if (inv.revoked_at || inv.declined_at) return; // already taken back: nothing to do
        await trx
          .updateTable('invitations')
          .set({ revoked_at: now, closed_at: inv.closed_at ?? now })
          .where('id', '=', inv.id)
          .execute();
        await recordAudit(trx, actor, now, {
          teamId,
          action: 'invitation.revoked',
          targetType: 'invitation',
          targetId: inv.id,
          before: { email: inv.email, role: inv.role, status: invitationStatus(inv, now) },
        });
      });
    },

    /** A new token, a new 7 days and a new e-mail for a pending or expired invitation. */
    async resend(actor: Actor, teamId: string, invitationId: string) {
      await access.requireTeam(actor.userId, teamId, 'invitations.manage');
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        const inv = await trx
          .selectFrom('invitations')
          .selectAll()
          .where('team_id', '=', teamId)
          .where('id', '=', invitationId)
          .forUpdate()
          .executeTakeFirst();
        if (!inv) throw notFound('invitation');
        if (inv.accepted_at)
          throw conflict('invitation_used', 'This invitation has already been accepted.');
        if (inv.revoked_at || inv.declined_at)
          throw conflict(
            'invitation_revoked',
            'This invitation was taken back or declined; create a new one.',
          );
        if (inv.closed_at)
          throw conflict(
            'invitation_superseded',
            'A newer invitation to this address exists; resend that one.',
          );
        await sendToken(trx, actor, inv, now);
        await recordAudit(trx, actor, now, {
          teamId,
          action: 'invitation.resent',
          targetType: 'invitation',
          targetId: inv.id,
          before: { expires_at: iso(inv.expires_at) },
        });
        return present((await byId(trx, teamId, inv.id))!);
      });
    },

    async accept(actor: Actor, token: string) {
      await limiter.consume(`accept:ip:${actor.ip}`, acceptsPerIp, 3600);
      await usable(token, actor.email);
      const now = clock.now();
      return db.transaction().execute(async (trx) => {
        // The token came by e-mail to the caller's address: the mailbox is proven, the address
        // verified at once. The row lock orders this against a take-over of the address
        // (identity/address-claims.ts): if the address went to another account first, the
        // caller no longer holds it and the invitation is not theirs.
        const holder = await trx
          .updateTable('users')
          .set({ email_verified_at: sql`coalesce(email_verified_at, ${now})` })
          .where('id', '=', actor.userId)
          .where('email', '=', normalizeEmail(actor.email))
          .returning('id')
          .executeTakeFirst();
        if (!holder)
          throw forbidden(
            'email_mismatch',
            'This invitation was sent to an address your account no longer holds.',
          );
        // Single use under concurrency: only the first transaction finds the row open.
        const inv = await trx
          .updateTable('invitations')
          .set({ accepted_at: now, accepted_by: actor.userId, closed_at: now })
          .where('token_hash', '=', hashSecret(token))
          .where('closed_at', 'is', null)
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .where('declined_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (!inv) {
          await usable(token, actor.email, trx);
          throw conflict('invitation_used', 'This invitation has already been used.');
        }
        await trx
          .insertInto('team_members')
          .values({ team_id: inv.team_id, user_id: actor.userId, role: inv.role, joined_at: now })
          .execute();
        await recordAudit(trx, actor, now, {
          teamId: inv.team_id,
          action: 'invitation.accepted',
          targetType: 'invitation',
          targetId: inv.id,
          after: { user_id: actor.userId, role: inv.role },
        });
        const m = await teams.member(trx, inv.team_id, actor.userId);
        return { team_id: inv.team_id, ...presentMember(m!) };
      });
    },

    /** The invitee says no. The token is proof enough; a signed-in caller must also match. */
    async decline(actor: Actor | undefined, token: string) {
      const inv = await usable(token, actor?.email);
      const now = clock.now();
      await db.transaction().execute(async (trx) => {
        const res = await trx
          .updateTable('invitations')
          .set({ declined_at: now, closed_at: now })
          .where('id', '=', inv.id)
          .where('closed_at', 'is', null)
          .executeTakeFirst();
        if (res.numUpdatedRows === 0n)
          throw conflict('invitation_used', 'This invitation has already been used.');
        await recordAudit(trx, actor ?? null, now, {
          teamId: inv.team_id,
          action: 'invitation.declined',
          targetType: 'invitation',
          targetId: inv.id,
          before: { email: inv.email, role: inv.role },
        });
      });
    },

    /** What the invitation page shows, without signing in: team, role, address, status. */
    async preview(token: string) {
      const row = await db
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
          'u.name as inviter_name',
        ])
        .where('i.token_hash', '=', hashSecret(token))
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        team: { name: row.team_name, slug: row.team_slug },
        role: row.role,
        email: row.email,
        status: invitationStatus(row, clock.now()),
        expires_at: iso(row.expires_at),
        inviter_name: row.inviter_name,
      };
    },
  };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
