// When certificates are ordered again (certificates/renewal.ts): renewal 30 days ahead, and a
// back-off per failing host within Let's Encrypt's 5 failed validations per host per hour.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffMs, renewalAt, retryAt } from '../../src/certificates/renewal.ts';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const t0 = new Date('2026-11-28T00:00:00Z');
const plus = (ms: number) => new Date(t0.getTime() + ms);

describe('renewalAt', () => {
  it.each([
    ['90 days (Let’s Encrypt)', 90 * DAY, 60 * DAY],
    ['5 years (Pebble)', 1826 * DAY, 1796 * DAY],
    ['30 days', 30 * DAY, 20 * DAY],
    ['6 days (short-lived)', 6 * DAY, 4 * DAY],
    ['none: already expired', 0, 0],
  ])('a certificate valid for %s is renewed after %#', (_, life, at) => {
    expect(renewalAt(t0, plus(life))).toEqual(plus(at));
  });

  it('is never after expiry, never before issue, and at most 30 days before expiry', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4000 * DAY }), (life) => {
        const at = renewalAt(t0, plus(life)).getTime();
        expect(at).toBeLessThanOrEqual(t0.getTime() + life);
        expect(at).toBeGreaterThanOrEqual(t0.getTime());
        expect(t0.getTime() + life - at).toBeLessThanOrEqual(30 * DAY);
      }),
    );
  });
});

describe('backoffMs', () => {
  it.each([
    [0, 0],
    [1, 1 * MIN],
    [2, 5 * MIN],
    [3, 15 * MIN],
    [4, 60 * MIN],
    [5, 120 * MIN],
    [6, 240 * MIN],
    [8, 960 * MIN],
    [9, DAY],
    [1000, DAY],
  ])('after %i failures waits %i ms', (failures, ms) => {
    expect(backoffMs(failures)).toBe(ms);
    expect(retryAt(t0, failures)).toEqual(plus(ms));
  });

  it('never grows smaller as failures add up', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), (n) => {
        expect(backoffMs(n + 1)).toBeGreaterThanOrEqual(backoffMs(n));
      }),
    );
  });

  it('tries a host that always fails fewer than 5 times in any hour', () => {
    // Each attempt fails at once; the next starts when its back-off ends.
    const attempts: number[] = [];
    let at = 0;
    for (let failures = 1; failures <= 40; failures++) {
      attempts.push(at);
      at += backoffMs(failures);
    }
    expect(attempts.filter((a) => a < 60 * MIN)).toEqual([0, 1, 6, 21].map((m) => m * MIN));
    // The hour holding the most attempts starts at one of them: each is checked.
    for (const start of attempts) {
      const inHour = attempts.filter((a) => a >= start && a < start + 60 * MIN);
      expect(inHour.length, `the hour from minute ${start / MIN}`).toBeLessThan(5);
    }
  });
});
