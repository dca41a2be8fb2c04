// What an invitation's token proves. The token lives only in the e-mail sent to the invited
// address, so whoever presents a usable one for that address has read that mailbox: accepting
// by token, and signing up with it, verify the address at once (docs/api.md).
import type { Queryable } from '../db/database.ts';
import { conflict, forbidden, gone, notFound } from '../errors.ts';
import { hashSecret } from '../secrets.ts';
import { invitationByToken } from './invitations-dal.ts';

/**
 * The invitation behind a token, checked for use at `now`; `email` (lower-cased) is compared
 * if given, and so is the kind (team or org). Unknown, of another kind, revoked or declined 404;
 * accepted 409; expired 410; other address 403.
 */
export async function usableInvitation(
  q: Queryable,
  token: string,
  email: string | undefined,
  now: Date,
  kind?: 'team' | 'org',
) {
  const inv = await invitationByToken(q, hashSecret(token));
  // A team's token on the org routes (or the reverse) is as unknown there as a made-up one.
  if (!inv || (kind && inv.kind !== kind) || inv.revoked_at || inv.declined_at)
    throw notFound('invitation');
  if (inv.accepted_at) {
    throw conflict('invitation_used', 'This invitation has already been accepted.');
  }
  if (inv.expires_at <= now) {
    throw gone('invitation_expired', 'This invitation has expired; ask for a new one.');
  }
  if (email !== undefined && email !== inv.email) {
    throw forbidden(
      'email_mismatch',
      'This invitation was sent to another e-mail address; sign in with that address.',
    );
  }
  return inv;
}
