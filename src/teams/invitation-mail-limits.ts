// The limits on invitation e-mails (docs/api.md, Invitations): per team or org in any hour, per
// address in any 24 hours across all of them, as sliding windows over the invitation_emails log.
import type { Queryable } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import * as dal from './invitations-dal.ts';

/** How many invitation e-mails may go out: per team in any hour, per address in any 24 hours. */
export interface InvitationMailLimits {
  perTeamHour: number;
  perAddressDay: number;
}

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

/** `noun` names what invites in the 429's words: a team or an organization. */
export function createMailCounter(mailLimits: InvitationMailLimits, noun: string) {
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
    const sentAt = await dal.nthSentSince(
      trx,
      column,
      value,
      limit,
      new Date(now.getTime() - windowMs),
    );
    return sentAt ? new Date(sentAt.getTime() + windowMs) : undefined;
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
    await dal.lockMailLogs(trx, invitation.team_id, invitation.email);
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
        team &&
          `this ${noun} has sent ${mailLimits.perTeamHour} invitation e-mails in the last hour`,
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
    await dal.pruneMailLog(
      trx,
      invitation.team_id,
      invitation.email,
      new Date(now.getTime() - DAY_MS),
    );
    await dal.logMail(trx, {
      teamId: invitation.team_id,
      email: invitation.email,
      invitationId: invitation.id,
      sentAt: now,
    });
  }

  return countMail;
}
