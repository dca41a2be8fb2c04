// Who holds an e-mail address, inside the caller's transaction (docs/api.md, "Proof of e-mail
// ownership"). users_email_key keeps one account per address; these steps decide which one.
// Every path that may create an account for an address first takes that address's advisory
// lock, so two sign-ups, a sign-up and a take-over, or two take-overs of one address run one
// after the other and each sees what the previous one committed. The unique index stays the
// backstop: a path that forgot the lock would get 409 email_taken, never a second account.
import type { Queryable } from '../db/database.ts';
import type { Sealer } from '../secrets.ts';
import { hashSecret, newSecret } from '../secrets.ts';
import { addSeconds } from '../clock.ts';
import { conflict } from '../errors.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { enqueueEmail } from '../mail/outbox.ts';
import { verificationEmail } from '../mail/templates.ts';
import { deleteLinksExpiredBefore, insertLink, moveToAddress } from './address-dal.ts';
import { notifyRevoked, revokeTokensOf } from './identity-dal.ts';

/** How long a verification link works. */
export const VERIFICATION_HOURS = 24;

export const emailTaken = () =>
  conflict(
    'email_taken',
    'An account with that e-mail already exists and has proved it; sign in with POST /v2/auth/login.',
  );

/**
 * Takes the address away from an account that never proved it, because someone just proved
 * the mailbox. The account keeps its id, projects and teams under a placeholder address that
 * no one can sign in with (`<id>@released.invalid`, RFC 2606); its tokens are revoked and the
 * revocation is NOTIFYed like any other. Returns the revoked token ids, for the local cache.
 */
export async function releaseAddress(
  trx: Queryable,
  holder: { id: string },
  email: string,
  now: Date,
) {
  const placeholder = `${holder.id.toLowerCase()}@released.invalid`;
  await moveToAddress(trx, holder.id, placeholder);
  const revoked = await revokeTokensOf(trx, holder.id, now);
  for (const id of revoked) await notifyRevoked(trx, id);
  await recordAudit(trx, null, now, {
    action: 'user.email_released',
    targetType: 'user',
    targetId: holder.id,
    before: { email },
    after: { reason: 'another account proved the mailbox' },
  });
  return revoked;
}

export interface VerificationRequest {
  email: string;
  /** The account that asks to prove its address, or absent for a sign-up waiting for proof. */
  userId?: string;
  /** A sign-up waiting for proof: the account to create once the link is followed. */
  signup?: { passwordHash: string; name: string };
  /** An unverified account holds the address now (the e-mail says so). */
  takesOver: boolean;
}

/** Stores a new link (its hash only) and queues its e-mail, in the caller's transaction. */
export interface LinkMail {
  sealer: Sealer;
  publicUrl: string;
}

export async function issueVerification(
  trx: Queryable,
  mail: LinkMail,
  now: Date,
  r: VerificationRequest,
) {
  const token = newSecret('vfy');
  const expiresAt = addSeconds(now, VERIFICATION_HOURS * 3600);
  // Links of this address that expired long ago are dead weight, and may hold a password hash.
  await deleteLinksExpiredBefore(trx, r.email, addSeconds(now, -86400));
  await insertLink(trx, {
    email: r.email,
    user_id: r.userId ?? null,
    password_hash: r.signup?.passwordHash ?? null,
    name: r.signup?.name ?? null,
    token_hash: hashSecret(token),
    created_at: now,
    expires_at: expiresAt,
  });
  // The token rides in the fragment: browsers never send it to a server, so it reaches no log,
  // proxy or Referer, and a mail scanner that fetches the link cannot use it.
  const link = `${mail.publicUrl}/verify-email#token=${encodeURIComponent(token)}`;
  const body = verificationEmail({
    to: r.email,
    link,
    expiresAt,
    signup: !!r.signup,
    takesOver: r.takesOver,
  });
  await enqueueEmail(trx, mail.sealer, now, { to: r.email, ...body });
  return expiresAt;
}
