// Bearer tokens that name their token, user and expiry under a MAC of the service's key, so
// that a caller's first request needs no database lookup to know who is calling: only whether
// the token was revoked, which every instance knows from memory (revocations.ts). The token's
// SHA-256 is stored as before, and a token this reading refuses (an older random token, or one
// signed under a key since rotated) is still looked up by it: the MAC only ever saves a lookup.
//
//   fp_ + base64url( version 1 | token ULID 16 | user ULID 16 | expiry ms 6 | MAC 16 )
//
// Ids are ULIDs after a prefix (ids.ts), carried as their 128 bits. The MAC is HMAC-SHA256 of
// everything before it, truncated to 128 bits (RFC 2104 section 5 allows truncation).
import { timingSafeEqual } from 'node:crypto';
import { ID_PREFIXES } from '../ids.ts';

export interface TokenClaims {
  tokenId: string;
  userId: string;
  expiresAt: Date | null;
}

/** A keyed MAC of `data`; only its first MAC_BYTES are used. */
export type Mac = (data: Buffer) => Buffer;

const VERSION = 1;
const ULID_BYTES = 16;
const EXPIRY_BYTES = 6;
const MAC_BYTES = 16;
const SIGNED = 1 + 2 * ULID_BYTES + EXPIRY_BYTES;
const LENGTH = SIGNED + MAC_BYTES;
/** base64url of LENGTH bytes, without padding. */
export const SIGNED_TOKEN_CHARS = Math.ceil((LENGTH * 4) / 3);

const PREFIX = 'fp_';
const TOKEN_ID = `${ID_PREFIXES.token}_`;
const USER_ID = `${ID_PREFIXES.user}_`;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const VALUE = new Map([...CROCKFORD].map((c, i) => [c, i]));

/** A ULID's 26 characters (130 bits, the first two zero) as 16 bytes; undefined if not one. */
function ulidBytes(ulid: string, into: Buffer, at: number): boolean {
  if (ulid.length !== 26) return false;
  let acc = 0;
  let bits = 0;
  let out = at + ULID_BYTES;
  // From the last character: 26 × 5 bits fill the 16 bytes from the right.
  for (let i = 25; i >= 0; i--) {
    const v = VALUE.get(ulid[i] as string);
    if (v === undefined) return false;
    acc |= v << bits;
    bits += 5;
    if (bits >= 8) {
      into[--out] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
  }
  // What is left over is the first character's top bits, which a ULID keeps zero.
  return out === at && acc === 0;
}

function ulidText(from: Buffer, at: number): string {
  let acc = 0;
  let bits = 0;
  const chars: string[] = [];
  for (let i = at + ULID_BYTES - 1; i >= at; i--) {
    acc |= (from[i] as number) << bits;
    bits += 8;
    while (bits >= 5) {
      chars.push(CROCKFORD[acc & 31] as string);
      acc >>>= 5;
      bits -= 5;
    }
  }
  chars.push(CROCKFORD[acc & 31] as string);
  return chars.reverse().join('');
}

/** The signed token for these claims, or undefined if an id is not a ULID of its kind. */
export function mintToken(mac: Mac, claims: TokenClaims): string | undefined {
  const { tokenId, userId, expiresAt } = claims;
  if (!tokenId.startsWith(TOKEN_ID) || !userId.startsWith(USER_ID)) return undefined;
  const raw = Buffer.alloc(LENGTH);
  raw[0] = VERSION;
  if (!ulidBytes(tokenId.slice(TOKEN_ID.length), raw, 1)) return undefined;
  if (!ulidBytes(userId.slice(USER_ID.length), raw, 1 + ULID_BYTES)) return undefined;
  raw.writeUIntBE(expiresAt ? expiresAt.getTime() : 0, 1 + 2 * ULID_BYTES, EXPIRY_BYTES);
  mac(raw.subarray(0, SIGNED)).copy(raw, SIGNED, 0, MAC_BYTES);
  return PREFIX + raw.toString('base64url');
}

/** The claims of a token this key signed; undefined for any other string. */
export function readToken(mac: Mac, token: string): TokenClaims | undefined {
  if (token.length !== PREFIX.length + SIGNED_TOKEN_CHARS || !token.startsWith(PREFIX))
    return undefined;
  const raw = Buffer.from(token.slice(PREFIX.length), 'base64url');
  // Buffer.from skips characters that are not base64url: the text must round-trip exactly.
  if (raw.length !== LENGTH || raw[0] !== VERSION) return undefined;
  if (raw.toString('base64url') !== token.slice(PREFIX.length)) return undefined;
  const expected = mac(raw.subarray(0, SIGNED)).subarray(0, MAC_BYTES);
  if (!timingSafeEqual(expected, raw.subarray(SIGNED))) return undefined;
  const expiry = raw.readUIntBE(1 + 2 * ULID_BYTES, EXPIRY_BYTES);
  return {
    tokenId: TOKEN_ID + ulidText(raw, 1),
    userId: USER_ID + ulidText(raw, 1 + ULID_BYTES),
    expiresAt: expiry === 0 ? null : new Date(expiry),
  };
}
