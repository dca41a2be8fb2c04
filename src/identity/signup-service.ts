// Sign-up and proof of e-mail ownership (CONTRACT 2; docs/api.md, "Proof of e-mail
// ownership"). Typing an address at sign-up does not make it yours: the account holds it, but
// only proving the mailbox (a verification link, or an invitation's token) makes it count.
// An account that never proved its address gives it up to whoever proves the mailbox.
import type { Database, Queryable } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { addDays } from '../clock.ts';
import type { Config } from '../config.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { Actor } from '../actor.ts';
import type { Sealer } from '../secrets.ts';
import { hashSecret } from '../secrets.ts';
import { AppError, conflict, forbidden, gone, notFound } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { usableInvitation } from '../teams/invitation-proof.ts';
import { hashPassword, verifyPassword } from './password.ts';
import * as dal from './identity-dal.ts';
import * as address from './address-dal.ts';
import { normalizeEmail } from '../mail/address.ts';
import { presentUser, SESSION_DAYS } from './identity-service.ts';
import { emailTaken, issueVerification, releaseAddress } from './address-claims.ts';
import type { TokenCache } from './token-cache.ts';

type UserRow = Awaited<ReturnType<typeof dal.insertUser>>;

const SIGNUP_SESSION = 'sign-up session';
const VERIFY_SESSION = 'e-mail verification session';

interface Deps {
  db: Database;
  clock: Clock;
  limiter: RateLimiter;
  sealer: Sealer;
  tokens: TokenCache;
  config: Pick<Config, 'signup' | 'rateLimits' | 'publicUrl'>;
}

export interface SignupInput {
  email: string;
  password: string;
  name?: string;
  invitation_token?: string;
}

const wrongPassword = () =>
  new AppError(
    401,
    'invalid_credentials',
    'Unauthorized',
    'The password is not the one chosen for this account at sign-up; send that password with the token.',
  );
const linkUsed = () =>
  conflict(
    'verification_used',
    'This link has already been used; sign in with POST /v2/auth/login.',
  );
const linkExpired = () =>
  gone(
    'verification_expired',
    'This link has expired: sign in and ask for ' +
      'another with POST /v2/user/verification-email, or sign up again.',
  );
/** The name of an account whose owner gave none: the local part of its address. */
const defaultName = (email: string) => email.split('@', 1)[0] ?? email;

const closedSignup = () =>
  forbidden(
    'signup_closed',
    'Sign-up is by invitation only on this service: open the link of your invitation e-mail.',
  );

export function createSignupService({ db, clock, limiter, sealer, tokens, config }: Deps) {
  const limits = config.rateLimits;
  const mail = { sealer, publicUrl: config.publicUrl };

  async function startSession(q: Queryable, user: UserRow, name: string, now: Date) {
    const expires = addDays(now, SESSION_DAYS);
    const { token } = await dal.insertToken(
      q,
      { userId: user.id, name, kind: 'session', now, expiresAt: expires },
      sealer.tokenMac,
    );
    return { user: presentUser(user), access_token: token, expires_at: iso(expires) };
  }

  /** Verification e-mails anyone can trigger for an address are limited per address. */
  const countMail = (email: string) =>
    limiter.consume(`verify-mail:${email}`, config.rateLimits.verificationEmailsPerAddress, 3600);

  /** Runs a transaction, then drops from this instance's cache the tokens it revoked. */
  async function releasing<T>(work: (trx: Queryable, revoked: string[]) => Promise<T>): Promise<T> {
    let revoked: string[] = [];
    const result = await transaction(db, (trx) => {
      revoked = []; // only what the attempt that commits revoked
      return work(trx, revoked);
    });
    for (const id of revoked) tokens.forget(id);
    return result;
  }

  return {
    /**
     * 201 `{session}` when the account exists now (verified if an invitation token came along),
     * 202 `{pending}` when it will exist once the mailbox is proven by the e-mailed link.
     */
    async signup(input: SignupInput, ip: string) {
      await limiter.consume(`signup:ip:${ip}`, limits.signupsPerIp, 3600);
      const email = normalizeEmail(input.email);
      const now = clock.now();
      const token = input.invitation_token;
      if (token !== undefined) await usableInvitation(db, token, email, now);
      else if (config.signup === 'closed') {
        if ((await dal.pendingInvitationsFor(db, email, now, 1)).length === 0) throw closedSignup();
      }
      const passwordHash = await hashPassword(input.password);
      const name = input.name?.trim() || defaultName(email);
      // The mail limit is a counter outside the transaction: a retried attempt must not count
      // the same e-mail twice.
      let counted = false;
      return releasing(async (trx, revoked) => {
        await address.lockAddress(trx, email);
        const holder = await address.holderForUpdate(trx, email);
        if (holder?.email_verified_at) throw emailTaken();
        if (token !== undefined) {
          // The token proves the mailbox: an account that never proved the address gives it up.
          if (holder) revoked.push(...(await releaseAddress(trx, holder, email, now)));
          const user = await dal.insertUser(trx, {
            email,
            name,
            passwordHash,
            now,
            verifiedAt: now,
          });
          return { session: await startSession(trx, user, SIGNUP_SESSION, now) };
        }
        if (holder || config.signup === 'closed') {
          if (!counted) await countMail(email);
          counted = true;
          const expiresAt = await issueVerification(trx, mail, now, {
            email,
            signup: { passwordHash, name },
            takesOver: !!holder,
          });
          return { pending: { email, expires_at: iso(expiresAt) } };
        }
        const user = await dal.insertUser(trx, {
          email,
          name,
          passwordHash,
          now,
          verifiedAt: null,
        });
        await issueVerification(trx, mail, now, { email, userId: user.id, takesOver: false });
        return { session: await startSession(trx, user, SIGNUP_SESSION, now) };
      });
    },

    /**
     * Follows a verification link. The password chosen for the account must come with the
     * token: the link alone would let someone who signed up with another person's address have
     * it confirmed by that person's careless click.
     */
    async verify(input: { token: string; password: string }, ip: string) {
      const ipKey = `verify:ip:${ip}`;
      const hit = await limiter.consume(ipKey, limits.failedLoginsPerIp, limits.loginWindowSeconds);
      const now = clock.now();
      const link = await address.linkByToken(db, hashSecret(input.token));
      if (!link) throw notFound('verification link');
      if (link.used_at) throw linkUsed();
      if (link.expires_at <= now) throw linkExpired();
      const owner = link.user_id ? await dal.userById(db, link.user_id) : undefined;
      const stored = link.password_hash ?? owner?.password_hash;
      if (!stored || !(await verifyPassword(stored, input.password))) throw wrongPassword();
      await limiter.refund(ipKey, hit.windowStart);
      return releasing(async (trx, revoked) => {
        // Single use under concurrency: only the first transaction finds the link unused.
        if (!(await address.claimLink(trx, link.id, now))) throw linkUsed();
        if (link.user_id) {
          // Conditional on the account still holding the address: a take-over may have won.
          const user = await address.verifyHolder(trx, link.user_id, link.email, now);
          if (!user) {
            throw conflict(
              'email_taken',
              'Another account proved this address first; this link no longer applies.',
            );
          }
          return startSession(trx, user, VERIFY_SESSION, now);
        }
        // A link without an account is a sign-up waiting for proof, which stored its password.
        const passwordHash = link.password_hash;
        if (passwordHash === null)
          throw new Error(`verification link ${link.id} has neither an account nor a password`);
        await address.lockAddress(trx, link.email);
        const holder = await address.holderForUpdate(trx, link.email);
        if (holder?.email_verified_at) throw emailTaken();
        if (holder) revoked.push(...(await releaseAddress(trx, holder, link.email, now)));
        const user = await dal.insertUser(trx, {
          email: link.email,
          name: link.name ?? defaultName(link.email),
          passwordHash,
          now,
          verifiedAt: now,
        });
        // The sign-up became this account: the row keeps no password hash from now on.
        await address.attachLink(trx, link.id, user.id);
        return startSession(trx, user, VERIFY_SESSION, now);
      });
    },

    /** A new link for the caller's address. */
    async resend(actor: Actor) {
      const user = await dal.userById(db, actor.userId);
      if (!user) throw notFound('user');
      if (user.email_verified_at) {
        throw conflict(
          'email_already_verified',
          'Your address is verified already; there is nothing to confirm.',
        );
      }
      await countMail(user.email);
      const now = clock.now();
      const expiresAt = await transaction(db, (trx) =>
        issueVerification(trx, mail, now, {
          email: user.email,
          userId: user.id,
          takesOver: false,
        }),
      );
      return { email: user.email, expires_at: iso(expiresAt) };
    },
  };
}

export type SignupService = ReturnType<typeof createSignupService>;
