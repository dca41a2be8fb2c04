// Stored token hashes must never change: every token issued before would stop working. The
// one-shot hash (issue 13, item 3) is SHA-256 of the token's UTF-8 text, as createHash was.
import { describe, expect, it } from 'vitest';
import { hashSecret, newSecret, sealer } from '../../src/secrets.ts';

describe('hashSecret', () => {
  it('is SHA-256 of the text (FIPS 180-2 test vector)', () => {
    expect(hashSecret('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('hashes a token to 32 bytes, the same every time', () => {
    const token = newSecret('fp');
    expect(hashSecret(token)).toHaveLength(32);
    expect(hashSecret(token).equals(hashSecret(token))).toBe(true);
  });

  it('a sealer keyed from the same secret key opens what another sealed', () => {
    const sealed = sealer('key-1').seal('hello');
    expect(sealer('key-1').open(sealed)).toBe('hello');
    expect(() => sealer('key-2').open(sealed)).toThrow();
  });
});
