// Ids (src/ids.ts): a type prefix and a ULID whose random part comes from a pooled PRNG. They
// must stay unique, ordered by their time and then by creation within one millisecond, and
// every character of the ULID alphabet must be drawn.
import { describe, expect, it } from 'vitest';
import { decodeTime } from 'ulidx';
import { newId, newIdAfter } from '../../src/ids.ts';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('newId', () => {
  it('is unique and ordered across many ids in one millisecond and across milliseconds', () => {
    const at = new Date('2026-11-26T00:00:00Z');
    const ids = Array.from({ length: 20_000 }, (_, i) =>
      newId('event', new Date(at.getTime() + Math.floor(i / 1000))),
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids.slice(0, 10)) {
      expect(id.startsWith('evt_')).toBe(true);
      expect(id.slice(4)).toMatch(ULID);
      expect(decodeTime(id.slice(4))).toBe(at.getTime());
    }
  });

  it('draws every character of the alphabet in the random part, none much more than another', () => {
    const counts = new Map<string, number>();
    // A later millisecond each time, so that each random part is drawn, not incremented.
    const from = Date.now() + 3600_000;
    for (let i = 0; i < 4000; i++)
      for (const c of newId('frame', new Date(from + i * 7)).slice(14))
        counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(32);
    const expected = (4000 * 16) / 32;
    for (const n of counts.values()) expect(Math.abs(n - expected)).toBeLessThan(expected * 0.15);
  });

  it('newIdAfter sorts after an id made by another process, even one from the future', () => {
    const previous = newId('event', new Date(Date.now() + 7200_000));
    const id = newIdAfter('event', new Date(), previous);
    expect(id > previous).toBe(true);
  });
});
