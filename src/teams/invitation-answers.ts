// Answering an invitation by its id, for an account whose address is proven (the console's home
// page lists them: GET /v2/user/invitations). The e-mailed token is the proof of the mailbox for
// everyone else; a proven address has given that proof already, so its owner may answer what
// the list shows without the e-mail. Either kind (team or org): the row says which, and the
// membership and the audit row are the same for both. What accepting does is shared with
// accepting by token (invitations-service.ts).
import type { Actor } from '../actor.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import type { Clock } from '../clock.ts';
import type { Database, Queryable } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { notifyOfMembership } from '../notifications/notify.ts';
import type { Role } from '../access/roles.ts';
import * as dal from './invitations-dal.ts';
import { presentMember } from './members-service.ts';
import * as teams from './teams-dal.ts';

/** Makes the caller a member as the accepted invitation says, with its audit row. */
export async function joinByInvitation(
  trx: Queryable,
  actor: Actor,
  inv: { id: string; team_id: string; role: Role },
  now: Date,
) {
  await teams.insertMember(trx, { teamId: inv.team_id, userId: actor.userId, role: inv.role, now });
  const joined = { teamId: inv.team_id, userId: actor.userId, role: inv.role, at: now };
  await notifyOfMembership(trx, { ...joined, change: 'added' });
  await recordAudit(trx, actor, now, {
    teamId: inv.team_id,
    action: 'invitation.accepted',
    targetType: 'invitation',
    targetId: inv.id,
    after: { user_id: actor.userId, role: inv.role },
  });
  const m = await teams.member(trx, inv.team_id, actor.userId);
  if (!m) throw new Error(`member ${actor.userId} vanished inside its own transaction`);
  return { team_id: inv.team_id, ...presentMember(m) };
}

/** The audit row of a declined invitation (by token, maybe signed out, or by id). */
export const recordDecline = (
  trx: Queryable,
  actor: Actor | null,
  inv: { id: string; team_id: string; email: string; role: Role },
  now: Date,
) =>
  recordAudit(trx, actor, now, {
    teamId: inv.team_id,
    action: 'invitation.declined',
    targetType: 'invitation',
    targetId: inv.id,
    before: { email: inv.email, role: inv.role },
  });

export function createInvitationAnswers({ db, clock }: { db: Database; clock: Clock }) {
  /** The open invitation `id` to the caller's proven address, answered; else 404, whatever the
   *  reason (not theirs, unproven, used, expired), as the list would not have shown it. */
  const answer = (actor: Actor, id: string, accept: boolean) =>
    transaction(db, async (trx) => {
      const now = clock.now();
      const email = await dal.provenAddress(trx, actor.userId);
      const inv =
        email && (await dal.answerOpen(trx, { id, email, userId: actor.userId, now, accept }));
      if (!inv) throw notFound('invitation');
      if (accept) await joinByInvitation(trx, actor, inv, now);
      else await recordDecline(trx, actor, inv, now);
    });
  return {
    accept: (actor: Actor, id: string) => answer(actor, id, true),
    decline: (actor: Actor, id: string) => answer(actor, id, false),
  };
}

export type InvitationAnswers = ReturnType<typeof createInvitationAnswers>;
