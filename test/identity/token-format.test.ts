// Signed bearer tokens (src/identity/token-format.ts), pure: what one key signs reads back as
// the same claims, and nothing else reads at all (another key, any change to a character, an
// older random token, a string of the right length that is not canonical base64url).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { newId } from '../../src/ids.ts';
import { newSecret, SECRET_SHAPE, sealer } from '../../src/secrets.ts';
import {
  mintToken,
  readToken,
  SIGNED_TOKEN_CHARS,
  type TokenClaims,
} from '../../src/identity/token-format.ts';

const mac = sealer('one key').tokenMac;
const otherMac = sealer('another key').tokenMac;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Any ULID: a first character of 0–7 (the top two of 130 bits are zero), then 25 more. */
const ulid = fc
  .tuple(
    fc.constantFrom(...'01234567'),
    fc.array(fc.constantFrom(...CROCKFORD), { minLength: 25, maxLength: 25 }),
  )
  .map(([first, rest]) => first + rest.join(''));
const claims = fc.record({
  tokenId: ulid.map((u) => `tok_${u}`),
  userId: ulid.map((u) => `usr_${u}`),
  expiresAt: fc.option(
    fc.integer({ min: 1, max: 2 ** 48 - 1 }).map((ms) => new Date(ms)),
    {
      nil: null,
    },
  ),
});

const minted = (c: TokenClaims) => {
  const token = mintToken(mac, c);
  if (token === undefined) throw new Error(`not minted: ${JSON.stringify(c)}`);
  return token;
};

describe('signed tokens', () => {
  it('read back as the claims they were minted with', () => {
    fc.assert(
      fc.property(claims, (c) => {
        const token = minted(c);
        expect(token).toHaveLength(3 + SIGNED_TOKEN_CHARS);
        expect(readToken(mac, token)).toEqual(c);
      }),
    );
  });

  it('read as nothing under another key', () => {
    fc.assert(
      fc.property(claims, (c) => {
        expect(readToken(otherMac, minted(c))).toBeUndefined();
      }),
    );
  });

  it('read as nothing once any character is changed', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    fc.assert(
      fc.property(claims, fc.nat(), fc.constantFrom(...alphabet), (c, where, char) => {
        const token = minted(c);
        const i = where % token.length;
        fc.pre(token[i] !== char);
        const changed = token.slice(0, i) + char + token.slice(i + 1);
        expect(readToken(mac, changed)).toBeUndefined();
      }),
    );
  });

  it('read as nothing when the text is not what was signed', () => {
    const c = { tokenId: newId('token'), userId: newId('user'), expiresAt: null };
    const token = minted(c);
    const cases = [
      newSecret('fp'), // an older, random token: looked up in the database instead
      token.slice(0, -1),
      `${token}A`,
      `xx_${token.slice(3)}`,
      token.replace(/^fp_/, 'fpa_').slice(0, token.length),
      `fp_${'A'.repeat(SIGNED_TOKEN_CHARS)}`,
      // Same length, and Buffer.from would skip the '=': not the text that was signed.
      `${token.slice(0, 10)}=${token.slice(11)}`,
      '',
    ];
    for (const text of cases) expect(readToken(mac, text), text).toBeUndefined();
  });

  it('are not minted for ids that are not ULIDs of their kind', () => {
    const user = newId('user');
    const tokenId = newId('token');
    const cases: TokenClaims[] = [
      { tokenId: newId('team'), userId: user, expiresAt: null },
      { tokenId, userId: newId('team'), expiresAt: null },
      { tokenId: 'tok_short', userId: user, expiresAt: null },
      { tokenId: `tok_8${'0'.repeat(25)}`, userId: user, expiresAt: null }, // past 128 bits
      { tokenId: `tok_${'0'.repeat(25)}I`, userId: user, expiresAt: null }, // not Crockford
      { tokenId: tokenId.toLowerCase(), userId: user, expiresAt: null },
    ];
    for (const c of cases) expect(mintToken(mac, c), c.tokenId).toBeUndefined();
  });

  it('are redacted whole by the shape of our secrets', () => {
    const token = minted({ tokenId: newId('token'), userId: newId('user'), expiresAt: null });
    expect(`/x?t=${token}&y=1`.replace(new RegExp(SECRET_SHAPE.source, 'g'), 'R')).toBe(
      '/x?t=R&y=1',
    );
  });
});
