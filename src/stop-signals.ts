// How a person stops the service. SIGINT (Ctrl-C), SIGTERM (kill, systemd, docker stop) and
// SIGHUP (the terminal closed) all drain, then the process exits 0 (1 if the drain failed).
// Another signal during the drain exits at once, non-zero, as most servers do.
//
// One action often delivers a signal twice: Ctrl-C reaches every process of the terminal's
// foreground group, npm among them, and npm passes its copy on to us; `kill -- -PGID` and
// systemd signal every process. A signal within ECHO_MS of the first is taken as that copy.
//
// Only our own listeners are added and removed: tsx, npm and others keep theirs.
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];
export const ECHO_MS = 1000;

export interface StopOptions {
  drain(signal: StopSignal): Promise<void>;
  /** On a second signal, just before the exit: ask the children to stop, without waiting. */
  abandon(): void;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
  exit?: (code: number) => void;
  /** Milliseconds of a monotonic clock. */
  now?: () => number;
}

/** What one signal does, given the ones before it. */
export function stopHandler(o: StopOptions): (signal: StopSignal) => void {
  const exit = o.exit ?? ((code: number) => process.exit(code));
  const now = o.now ?? (() => performance.now());
  let first: number | undefined;
  return (signal) => {
    if (first === undefined) {
      first = now();
      o.log.info(
        { signal },
        'shutting down: draining requests and jobs ' + '(send the signal again to stop at once)',
      );
      o.drain(signal).then(
        () => exit(0),
        (err: unknown) => {
          o.log.error({ err }, 'error during shutdown');
          exit(1);
        },
      );
      return;
    }
    if (now() - first < ECHO_MS) return;
    o.log.warn({ signal }, 'second signal: stopping at once, without draining');
    try {
      o.abandon();
    } finally {
      exit(128 + constants.signals[signal]);
    }
  };
}

/** Adds our listener for each stop signal; returns a function that removes exactly those. */
export function stopOnSignals(o: StopOptions): () => void {
  const handle = stopHandler(o);
  const listeners = STOP_SIGNALS.map((s) => [s, () => handle(s)] as const);
  for (const [s, l] of listeners) process.on(s, l);
  return () => {
    for (const [s, l] of listeners) process.off(s, l);
  };
}
