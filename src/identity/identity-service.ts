// Accounts and bearer tokens (CONTRACT 2). Tokens are signed (token-format.ts), shown once,
// stored as SHA-256.
import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { addDays } from '../clock.ts';
import type { Config } from '../config.ts';
import type { RateLimiter } from '../http/rate-limit.ts';
import type { Actor } from '../actor.ts';
import { AppError, notFound } from '../errors.ts';
import { hashSecret, type Sealer } from '../secrets.ts';
import { dummyHash, verifyPassword } from './password.ts';
import * as dal from './identity-dal.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import { toPage, decodeCursor } from '../paging.ts';
import type { TokenCache } from './token-cache.ts';
import { readToken } from './token-format.ts';
import { createTokenTouches } from './token-touches.ts';
import { normalizeEmail } from '../mail/address.ts';

export const SESSION_DAYS = 30;

type UserRow = NonNullable<Awaited<ReturnType<typeof dal.userById>>>;
type TokenRow = Awaited<ReturnType<typeof dal.listTokens>>[number];

export const presentUser = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  created_at: iso(u.created_at),
  email_verified: u.email_verified_at !== null,
});
const presentToken = (t: TokenRow) => ({
  id: t.id,
  name: t.name,
  kind: t.kind,
  created_at: iso(t.created_at),
  expires_at: isoOrNull(t.expires_at),
  last_used_at: isoOrNull(t.last_used_at),
});

interface Deps {
  db: Database;
  clock: Clock;
  config: Pick<Config, 'rateLimits'>;
  limiter: RateLimiter;
  tokens: TokenCache;
  sealer: Pick<Sealer, 'tokenMac'>;
}

export function createIdentityService({ db, clock, config, limiter, tokens, sealer }: Deps) {
  const limits = config.rateLimits;
  const touches = createTokenTouches(db);

  /** Revokes tokens and tells every instance's cache, in one transaction. */
  async function revoke(where: { id: string; userId?: string }) {
    const revoked = await transaction(db, async (trx) => {
      const done = await dal.revokeToken(trx, where.id, clock.now(), where.userId);
      if (done) await dal.notifyRevoked(trx, where.id);
      return done;
    });
    tokens.forget(where.id);
    return revoked;
  }

  const issueToken = (
    userId: string,
    name: string,
    kind: 'session' | 'personal',
    expiresAt: Date | null,
  ) => dal.insertToken(db, { userId, name, kind, now: clock.now(), expiresAt }, sealer.tokenMac);

  /**
   * Who a token names: from the token itself when it is signed here and known not to be
   * revoked, else from its row. Undefined if revoked or unknown; expiry is the caller's to check.
   */
  async function resolve(token: string, hash: Buffer) {
    const claims = readToken(sealer.tokenMac, token);
    if (claims && tokens.revoked(claims.tokenId) === false) return claims;
    const row = await dal.tokenByHash(db, hash);
    if (!row || row.revoked_at) return undefined;
    return { tokenId: row.id, userId: row.user_id, expiresAt: row.expires_at };
  }

  const invalidCredentials = () =>
    new AppError(
      401,
      'invalid_credentials',
      'Unauthorized',
      'The e-mail or the password is wrong.',
      undefined,
      { 'www-authenticate': 'Bearer' },
    );

  return {
    async login(input: { email: string; password: string }, ip: string) {
      // Two throttles, as Auth0 separates brute-force protection from suspicious-IP throttling:
      // failed logins per client IP (across accounts), and per account and client IP, so that
      // an attacker's address is stopped without locking the owner out from anywhere else.
      // Each attempt is counted before the password is verified, by one statement that
      // increments and returns the count, so at most N verifications happen per window however
      // many arrive at once. A successful login takes its hit back (it was not a failure) and
      // clears its account+IP counter; the windows are fixed, so refused attempts never
      // lengthen a block.
      const email = normalizeEmail(input.email);
      const window = limits.loginWindowSeconds;
      const ipKey = `login:ip:${ip}`;
      const pairKey = `login:addr:${email}:ip:${ip}`;
      const ipHit = await limiter.consume(ipKey, limits.failedLoginsPerIp, window);
      try {
        await limiter.consume(pairKey, limits.failedLoginsPerAddress, window);
      } catch (err) {
        // Refused before any verification: only the account+IP throttle counts this one.
        await limiter.refund(ipKey, ipHit.windowStart);
        throw err;
      }
      const user = await dal.userByEmail(db, email);
      if (!user) {
        // The same work as for an account that exists: the answer's timing tells nothing.
        await verifyPassword(await dummyHash(), input.password);
        throw invalidCredentials();
      }
      if (!(await verifyPassword(user.password_hash, input.password))) throw invalidCredentials();
      await limiter.refund(ipKey, ipHit.windowStart);
      await limiter.reset(pairKey);
      const expires = addDays(clock.now(), SESSION_DAYS);
      const { token } = await issueToken(user.id, 'login session', 'session', expires);
      return { user: presentUser(user), access_token: token, expires_at: iso(expires) };
    },

    async authenticate(token: string) {
      const hash = hashSecret(token);
      const key = hash.toString('base64url');
      const now = clock.now();
      const cached = tokens.get(key);
      if (cached) return cached.expiresAt && cached.expiresAt <= now ? undefined : cached;
      const mark = tokens.mark();
      const found = await resolve(token, hash);
      if (!found || (found.expiresAt && found.expiresAt <= now)) return undefined;
      tokens.set(key, found, mark);
      // Off the request's path, batched with other tokens'; written at most once a minute
      // whatever the caller knows of the last write (token-touches.ts).
      touches.touch(found.tokenId, now);
      return { userId: found.userId, tokenId: found.tokenId };
    },

    /** Writes the batched last_used_at of the tokens used lately (token-touches.ts). */
    flushTokenUses: () => touches.flush(),

    /** A user's address as it is now; undefined for a user who is gone. Identity's one read
     *  for other areas (teams' invitations), so that none of them imports identity's DAL. */
    async emailOf(userId: string) {
      return (await dal.userById(db, userId))?.email;
    },

    async me(actor: Actor) {
      const user = await dal.userById(db, actor.userId);
      if (!user) throw notFound('user');
      return presentUser(user);
    },

    async logout(actor: Actor) {
      await revoke({ id: actor.tokenId });
    },

    async createToken(actor: Actor, input: { name: string; expires_in_days?: number }) {
      const expires = input.expires_in_days ? addDays(clock.now(), input.expires_in_days) : null;
      const { token, row } = await issueToken(actor.userId, input.name, 'personal', expires);
      return { ...presentToken(row), token };
    },

    async listTokens(actor: Actor, limit: number, cursor?: string) {
      const after = decodeCursor(cursor, 1)?.[0];
      const now = clock.now();
      const rows = await dal.listTokens(db, actor.userId, limit, after);
      const page = toPage(rows, limit, (t) => [t.id], presentToken);
      page.data = page.data.filter((t) => !t.expires_at || new Date(t.expires_at) > now);
      return page;
    },

    async revokeToken(actor: Actor, tokenId: string) {
      if (!(await revoke({ id: tokenId, userId: actor.userId }))) throw notFound('token');
    },

    async myInvitations(actor: Actor, limit: number, cursor?: string) {
      const after = decodeCursor(cursor, 1)?.[0];
      // Only a proven address sees its invitations (team, role, inviter): an account that merely
      // typed the address at sign-up learns nothing about it (docs/api.md).
      const rows = await dal.pendingInvitationsOfUser(db, actor.userId, clock.now(), limit, after);
      return toPage(
        rows,
        limit,
        (r) => [r.id],
        (r) => ({
          id: r.id,
          kind: r.kind,
          team_id: r.team_id,
          email: r.email,
          role: r.role,
          status: 'pending' as const,
          invited_by: r.invited_by,
          created_at: iso(r.created_at),
          expires_at: iso(r.expires_at),
          team: { id: r.team_id, name: r.team_name, slug: r.team_slug },
        }),
      );
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
