// Secrets at rest: random tokens that are stored only as hashes, and AES-256-GCM for values
// we must read back (outbox e-mail bodies carrying a token, env var values).
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hash,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/**
 * What our secrets look like: a known prefix, then at least 43 base64url characters (256 random
 * bits, newSecret; or a signed token, identity/token-format.ts). For redaction, not validation.
 */
export const SECRET_SHAPE = /\b(?:fp|fpa|whsec|inv)_[A-Za-z0-9_-]{43,}/;

/** A bearer secret with a readable prefix and 256 random bits. */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** SHA-256, one-shot: every authenticated request hashes its token, and createHash() builds an
 *  object per call that costs several times the hash itself. */
export function hashSecret(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

export function safeEqual(a: string, b: string): boolean {
  const x = hashSecret(a);
  const y = hashSecret(b);
  return timingSafeEqual(x, y);
}

export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
  /** A keyed digest: equal inputs give equal digests, and nothing about the input leaks. */
  digest(plain: string): string;
  /** HMAC-SHA256 under a key of its own, for bearer tokens (identity/token-format.ts). */
  tokenMac(data: Buffer): Buffer;
}

export function sealer(secretKey: string): Sealer {
  const key = hash('sha256', `frameplane:${secretKey}`, 'buffer');
  const tokenKey = hash('sha256', `frameplane:tokens:${secretKey}`, 'buffer');
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return `v1.${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed) {
      const raw = Buffer.from(sealed.slice(3), 'base64url');
      const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      d.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString('utf8');
    },
    digest(plain) {
      return createHmac('sha256', key).update(plain).digest('base64url');
    },
    tokenMac: (data) => createHmac('sha256', tokenKey).update(data).digest(),
  };
}
