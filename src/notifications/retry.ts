// When a failed delivery is tried again, and when an endpoint that keeps failing is turned off.
// Pure: delivery.ts applies them with the service clock.

/**
 * The waits after each failed try of an automatic delivery, in seconds: 1 min, 5 min, 30 min,
 * 2 h, 6 h, 15 h. Seven tries over about a day (23 h 41 min): long enough to outlast a
 * receiver's deploy or an outage of an evening, short enough that a message is not a day stale.
 */
export const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 21600, 54000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** When to try again after try number `attempt` (1-based) failed; undefined: give up. */
export function nextAttemptAt(attempt: number, failedAt: Date, manual: boolean): Date | undefined {
  // A ping or a redelivery is tried once: the person who asked is watching.
  if (manual) return undefined;
  const wait = RETRY_DELAYS_SECONDS[attempt - 1];
  return wait === undefined ? undefined : new Date(failedAt.getTime() + wait * 1000);
}

/**
 * An endpoint is turned off when its automatic deliveries failed at least DISABLE_AFTER_FAILURES
 * tries in a row and the first of them is DISABLE_AFTER_HOURS old: it has been failing for a
 * day, more than any one delivery's retries cover. One flaky minute with a burst of events
 * fails many tries at once, but not for a day, so it does not turn an endpoint off.
 */
export const DISABLE_AFTER_FAILURES = 15;
export const DISABLE_AFTER_HOURS = 24;

export function shouldDisable(failures: number, failingSince: Date, now: Date): boolean {
  const hours = (now.getTime() - failingSince.getTime()) / 3600_000;
  return failures >= DISABLE_AFTER_FAILURES && hours >= DISABLE_AFTER_HOURS;
}
