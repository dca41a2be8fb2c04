// One LISTEN connection per instance, shared by every waiter: an agent long-poll, a log or
// event stream, the clock. NOTIFY is sent inside the writing transaction, so it arrives on
// every instance exactly when the change commits. The connection reconnects if it drops.
import pg from 'pg';

export const CHANNELS = [
  'frameplane_agent',
  'frameplane_frame_events',
  'frameplane_logs',
  'frameplane_clock',
  'frameplane_tokens',
  'frameplane_access',
] as const;
export type Channel = (typeof CHANNELS)[number];
type Listener = (payload: string) => void;

export interface Listening {
  /** True at once if notified since the last call; else waits up to `ms` for a notification. */
  next(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

export interface Notifier {
  /** Calls `fn` for every notification on `channel` whose payload is `key` (or any, with '*'). */
  subscribe(channel: Channel, key: string, fn: Listener): () => void;
  /** Resolves true when `key` is notified on `channel`, false after `ms` or when aborted. */
  wait(channel: Channel, key: string, ms: number, signal?: AbortSignal): Promise<boolean>;
  /**
   * Starts listening now and remembers what arrives: take one before reading the state you
   * wait on, so a change landing between the read and the wait is not missed.
   */
  listen(channel: Channel, key: string): Listening;
  /** True while the LISTEN connection is up: only then does every notification arrive. */
  connected(): boolean;
  /**
   * Calls `fn` when the LISTEN connection is lost and again when it is back: notifications sent
   * in between were missed, so what was learnt from them (a cache) must be dropped.
   */
  onGap(fn: () => void): () => void;
  close(): Promise<void>;
}

export function createNotifier(
  connectionString: string,
  onError: (err: Error) => void = () => {},
): Notifier {
  const listeners = new Map<string, Set<Listener>>();
  const gapListeners = new Set<() => void>();
  const gap = () => {
    for (const fn of gapListeners) fn();
  };
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const emit = (channel: string, payload: string) => {
    for (const key of [`${channel}:${payload}`, `${channel}:*`])
      for (const fn of listeners.get(key) ?? []) fn(payload);
  };

  async function connect() {
    if (closed) return;
    const c = new pg.Client({ connectionString });
    c.on('notification', (n) => emit(n.channel, n.payload ?? ''));
    c.on('error', (err) => {
      onError(err);
      reconnect(c);
    });
    c.on('end', () => reconnect(c));
    try {
      await c.connect();
      for (const ch of CHANNELS) await c.query(`listen ${ch}`);
      client = c;
      gap();
      // Anything may have changed while we were away: wake every waiter once.
      for (const key of listeners.keys()) {
        const [ch, k] = key.split(/:(.*)/s);
        if (ch !== undefined && k !== undefined && k !== '*') emit(ch, k);
      }
    } catch (err) {
      onError(err as Error);
      reconnect(c);
    }
  }

  function reconnect(c: pg.Client) {
    if (closed || retry) return;
    if (client === c) {
      client = undefined;
      gap();
    }
    c.end().catch(() => {});
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, 1000);
  }

  const ready = connect();

  return {
    subscribe(channel, key, fn) {
      const k = `${channel}:${key}`;
      const set = listeners.get(k) ?? new Set();
      listeners.set(k, set);
      set.add(fn);
      return () => {
        set.delete(fn);
        if (set.size === 0) listeners.delete(k);
      };
    },
    async wait(channel, key, ms, signal) {
      await ready;
      return new Promise<boolean>((resolve) => {
        const done = (v: boolean) => {
          clearTimeout(timer);
          off();
          signal?.removeEventListener('abort', abort);
          resolve(v);
        };
        const abort = () => done(false);
        const off = this.subscribe(channel, key, () => done(true));
        const timer = setTimeout(() => done(false), ms);
        signal?.addEventListener('abort', abort, { once: true });
        if (signal?.aborted) done(false);
      });
    },
    listen(channel, key) {
      let pending = false;
      let wake: (() => void) | undefined;
      const off = this.subscribe(channel, key, () => {
        pending = true;
        wake?.();
      });
      return {
        async next(ms, signal) {
          await ready;
          if (!pending && ms > 0 && !signal?.aborted) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(done, ms);
              signal?.addEventListener('abort', done, { once: true });
              wake = done;
              function done() {
                clearTimeout(timer);
                signal?.removeEventListener('abort', done);
                wake = undefined;
                resolve();
              }
            });
          }
          const got = pending;
          pending = false;
          return got;
        },
        close: off,
      };
    },
    connected: () => client !== undefined,
    onGap(fn) {
      gapListeners.add(fn);
      return () => gapListeners.delete(fn);
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
