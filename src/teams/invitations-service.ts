// Invitations (spec 2 and 4, CONTRACT 4): a token of 256 random bits that lives only in the
// e-mail (stored as a hash), 7 days of service clock, single use, e-mail matched
// case-insensitively. The row, its audit record and its e-mail commit together. One mechanism
// for the two kinds of membership (kinds.ts): the service is built once for teams and once for
// organizations (CONTRACT 3a), and a token of one kind is unknown to the other's routes.
import type { Database, Queryable } from '../db/database.ts';
import { transaction } from '../db/database.ts';
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
import { conflict, forbidden, notFound } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { newId } from '../ids.ts';
import { normalizeEmail } from '../mail/address.ts';
import { type Kind, KIND_NOUN, refuseRole, requireOfKind } from './kinds.ts';
import { INVITATION_DAYS, invitationStatus } from './invitation-status.ts';
import { usableInvitation } from './invitation-proof.ts';
import { joinByInvitation, recordDecline } from './invitation-answers.ts';
import * as dal from './invitations-dal.ts';
import type { InvitationRow } from './invitations-dal.ts';
import { createMailCounter, type InvitationMailLimits } from './invitation-mail-limits.ts';
import { pageById } from '../db/paging.ts';

export type { InvitationMailLimits };

/** Names with line breaks or other controls are refused (PLAIN_TEXT_PATTERN), but a name stored
 *  before that check may hold them: an e-mail shows it on one line. */
const oneLine = (s: string) =>
  s
    .replace(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are the target
      /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g,
      ' ',
    )
    .trim();

interface Deps {
  db: Database;
  clock: Clock;
  access: Pick<AccessService, 'requireTeam' | 'requireOrg'>;
  sealer: Sealer;
  limiter: RateLimiter;
  publicUrl: string;
  acceptsPerIp: number;
  mailLimits: InvitationMailLimits;
  /** A user's address now: identity's `emailOf`, handed over by services.ts. Typed here rather
   *  than imported, because identity depends on teams (docs/architecture.md). */
  users: { emailOf(userId: string): Promise<string | undefined> };
  /** Invitations to a team (the default) or to an organization. */
  kind?: Kind;
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
  users,
  kind = 'team',
}: Deps) {
  const requireKind = requireOfKind(access, kind);
  const noun = KIND_NOUN[kind];
  const countMail = createMailCounter(mailLimits, noun);
  const present = (i: InvitationRow) => ({
    id: i.id,
    team_id: i.team_id,
    email: i.email,
    role: i.role,
    status: invitationStatus(i, clock.now()),
    invited_by: i.invited_by,
    created_at: iso(i.created_at),
    expires_at: iso(i.expires_at),
  });

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
    await dal.setToken(trx, invitation.id, hashSecret(token), expiresAt);
    const team = await dal.teamName(trx, invitation.team_id);
    const inviter = await dal.inviter(trx, actor.userId);
    await enqueueEmail(trx, sealer, now, {
      to: invitation.email,
      ...invitationEmail({
        kind: team.kind,
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
      kind,
    );

  /** The caller's address now: a bearer token does not carry it (identity/token-format.ts). */
  async function emailOf(actor: Actor) {
    const email = await users.emailOf(actor.userId);
    if (email === undefined) throw notFound('user');
    return email;
  }

  return {
    async list(actor: Actor, teamId: string, limit: number, cursor?: string) {
      await requireKind(actor.userId, teamId, 'invitations.manage');
      return pageById(dal.invitationsOfTeam(db, teamId), limit, cursor, present);
    },

    async create(actor: Actor, teamId: string, input: { email: string; role: Role }) {
      await requireKind(actor.userId, teamId, 'invitations.manage');
      refuseRole(kind, input.role);
      const email = normalizeEmail(input.email);
      const now = clock.now();
      return transaction(db, async (trx) => {
        const already = await dal.memberWithEmail(trx, teamId, email);
        if (already)
          throw conflict(
            'already_member',
            `That address belongs to a member of this ${noun} already.`,
          );
        // An expired invitation to the same address gives way to the new one.
        await dal.closeExpired(trx, teamId, email, now);
        const inv = await dal.insertInvitation(trx, {
          id: newId('invitation', now),
          team_id: teamId,
          email,
          role: input.role,
          token_hash: hashSecret(newSecret('inv')),
          invited_by: actor.userId,
          created_at: now,
          expires_at: addDays(now, INVITATION_DAYS),
        });
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
      await requireKind(actor.userId, teamId, 'invitations.manage');
      const now = clock.now();
      await transaction(db, async (trx) => {
        const inv = await dal.invitationForUpdate(trx, teamId, invitationId);
        if (!inv) throw notFound('invitation');
        if (inv.accepted_at)
          throw conflict(
            'invitation_used',
            'An accepted invitation cannot be taken back; remove the member instead.',
          );
        if (inv.revoked_at || inv.declined_at) return; // already taken back: nothing to do
        await dal.markRevoked(trx, inv.id, now, inv.closed_at ?? now);
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
      await requireKind(actor.userId, teamId, 'invitations.manage');
      const now = clock.now();
      return transaction(db, async (trx) => {
        const inv = await dal.invitationForUpdate(trx, teamId, invitationId);
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
        const sent = await dal.invitationById(trx, teamId, inv.id);
        if (!sent) throw new Error(`invitation ${inv.id} vanished inside its own transaction`);
        return present(sent);
      });
    },

    async accept(actor: Actor, token: string) {
      await limiter.consume(`accept:ip:${actor.ip}`, acceptsPerIp, 3600);
      const email = await emailOf(actor);
      await usable(token, email);
      const now = clock.now();
      return transaction(db, async (trx) => {
        // The token came by e-mail to the caller's address: the mailbox is proven, the address
        // verified at once. The row lock orders this against a take-over of the address
        // (identity/address-claims.ts): if the address went to another account first, the
        // caller no longer holds it and the invitation is not theirs.
        const holder = await dal.verifyHolder(trx, actor.userId, normalizeEmail(email), now);
        if (!holder)
          throw forbidden(
            'email_mismatch',
            'This invitation was sent to an address your account no longer holds.',
          );
        // Single use under concurrency: only the first transaction finds the row open.
        const inv = await dal.acceptOpen(trx, hashSecret(token), actor.userId, now, kind);
        if (!inv) {
          await usable(token, email, trx);
          throw conflict('invitation_used', 'This invitation has already been used.');
        }
        return joinByInvitation(trx, actor, inv, now);
      });
    },

    /** The invitee says no. The token is proof enough; a signed-in caller must also match. */
    async decline(actor: Actor | undefined, token: string) {
      const inv = await usable(token, actor && (await emailOf(actor)));
      const now = clock.now();
      await transaction(db, async (trx) => {
        if (!(await dal.declineOpen(trx, inv.id, now)))
          throw conflict('invitation_used', 'This invitation has already been used.');
        await recordDecline(trx, actor ?? null, inv, now);
      });
    },

    /** What the invitation page shows, without signing in: team or org, role, address, status.
     *  Either kind: the page serves both (web/invitation-page.ts). */
    async preview(token: string) {
      const row = await dal.preview(db, hashSecret(token));
      if (!row) return undefined;
      return {
        kind: row.kind,
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
