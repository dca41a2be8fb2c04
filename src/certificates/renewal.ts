// When the service asks its ACME server for a host's certificate (CONTRACT 5b): renewal 30 days
// before expiry, and a back-off per failing host that stays within Let's Encrypt's limit of 5
// failed validations per host per hour. Pure: the clock is the caller's.

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** How long before expiry a certificate is renewed. */
export const RENEW_BEFORE_MS = 30 * DAY;

/**
 * When a certificate valid from `notBefore` to `notAfter` is renewed: 30 days before it
 * expires, or at two thirds of its life when that is shorter than 90 days (a short-lived
 * certificate, as test servers issue, is renewed with a third of its life left).
 */
export function renewalAt(notBefore: Date, notAfter: Date): Date {
  const life = notAfter.getTime() - notBefore.getTime();
  return new Date(notAfter.getTime() - Math.min(RENEW_BEFORE_MS, Math.max(0, life) / 3));
}

/**
 * The pause after the n-th failure in a row (n ≥ 1): 1, 5 and 15 minutes, then one hour,
 * doubling up to a day. So a failing host is tried at most 4 times in its first hour (at 0, 1,
 * 6 and 21 minutes; the next at 81), and at most twice in any hour after: under Let's
 * Encrypt's 5 failed validations per host per hour.
 */
export function backoffMs(failures: number): number {
  const steps = [1, 5, 15].map((m) => m * MINUTE);
  if (failures <= 0) return 0;
  if (failures <= steps.length) return steps[failures - 1] as number;
  return Math.min(DAY, 60 * MINUTE * 2 ** (failures - steps.length - 1));
}

/** When the next attempt for a host may start after its `failures`-th failure at `now`. */
export function retryAt(now: Date, failures: number): Date {
  return new Date(now.getTime() + backoffMs(failures));
}

/** How long one attempt may hold a host (its lease): an order that outlives it may be redone. */
export const LEASE_MS = 10 * MINUTE;
