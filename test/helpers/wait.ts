// Waiting in tests is for a condition, not for a length of time: a fixed sleep is slow where the
// machine is fast and too short where it is loaded. waitFor calls a probe every `everyMs` until
// its answer is the one awaited, and after `timeoutMs` fails saying what it waited for and the
// last answer it saw. Every other wait helper of the tests (listening.ts, sse.ts, smtp.ts,
// runner/fixture.ts, faults/helpers/service.ts, cli/run.ts) is this one under another signature.

export interface WaitOptions<T> {
  /** How long to wait at most, in ms (10 s unless told). */
  timeoutMs?: number;
  /** How long between two probes, in ms (20 unless told). */
  everyMs?: number;
  /** Whether an answer of the probe is the one awaited; any truthy answer unless told. */
  until?: (value: T) => boolean;
  /** More for the failure's message: an agent's output, a log's last lines. */
  context?: () => string;
}

type Falsy = undefined | null | false | 0 | '';

/** A probe's answer, shortened for a message. */
export function describeValue(v: unknown, max = 500): string {
  let text: string;
  if (v instanceof Error) text = `${v.name}: ${v.message}`;
  else if (typeof v === 'string') text = JSON.stringify(v);
  else {
    try {
      text = JSON.stringify(v) ?? String(v);
    } catch {
      text = String(v);
    }
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

/**
 * Calls `probe` until its answer is the one awaited (truthy, or what `until` accepts) and
 * answers it; throws `timed out waiting for <what>; last: <answer>` after `timeoutMs`. A probe
 * that throws fails the wait at once: one that may fail while it waits catches its error.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: WaitOptions<T> & { until: (value: T) => boolean },
): Promise<T>;
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  options?: Omit<WaitOptions<T>, 'until'>,
): Promise<Exclude<T, Falsy>>;
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  { timeoutMs = 10_000, everyMs = 20, until = (v) => Boolean(v), context }: WaitOptions<T> = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (until(value)) return value;
    if (Date.now() >= deadline) {
      const more = context?.();
      throw new Error(
        `timed out waiting for ${what}; last: ${describeValue(value)} (waited ${timeoutMs} ms)${more ? `\n${more}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
