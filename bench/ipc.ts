// The bench's own processes (bench/processes.ts) answer requests over Node's IPC channel: each
// request carries an id, and its answer the same id.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

interface Envelope {
  id: number;
  body?: unknown;
  error?: string;
}

export interface Child {
  pid: number;
  /** Sends a request; answers what the child's handler returned. */
  ask<T>(body: unknown): Promise<T>;
  /** Asks the child to close what it opened, then waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `file` as a child process: TypeScript through tsx, or JavaScript (a bundle, as
 * `npm start` runs the service) as it is. It is ready when it has answered its first request;
 * `stdout` is where its standard output goes (`'inherit'` or a file's fd).
 */
export function startChild(
  file: URL,
  env: Record<string, string>,
  stdout: 'inherit' | 'ignore' | number = 'inherit',
  nodeFlags: string[] = [],
): Child {
  const path = fileURLToPath(file);
  const child: ChildProcess = fork(path, [], {
    execArgv: [...nodeFlags, ...(path.endsWith('.ts') ? ['--import', 'tsx'] : [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', stdout, 'inherit', 'ipc'],
  });
  const waiting = new Map<number, { resolve: (x: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  let exited: Error | undefined;
  child.on('message', (m: Envelope) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error !== undefined) w.reject(new Error(m.error));
    else w.resolve(m.body);
  });
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = new Error(`${file.pathname} exited (${signal ?? code})`);
      for (const w of waiting.values()) w.reject(exited);
      waiting.clear();
      resolve();
    }),
  );
  return {
    pid: child.pid ?? NaN,
    ask<T>(body: unknown) {
      if (exited) return Promise.reject(exited);
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (x: unknown) => void, reject });
        child.send({ id, body });
      });
    },
    async stop() {
      if (!exited) {
        await new Promise<unknown>((resolve) => {
          const id = next++;
          waiting.set(id, { resolve, reject: resolve });
          child.send({ id, body: { type: 'stop' } });
        });
      }
      await exit;
    },
  };
}

/** In a child: answers each request with `handle`'s result; `stop` is handled by `onStop`, then the process exits. */
export function serve(handle: (body: never) => Promise<unknown>, onStop: () => Promise<void>) {
  process.on('message', async (m: Envelope) => {
    const body = m.body as { type?: string };
    if (body?.type === 'stop') {
      await onStop().catch((err) => console.error(err));
      process.send?.({ id: m.id, body: null }, () => process.exit(0));
      return;
    }
    try {
      process.send?.({ id: m.id, body: await handle(body as never) });
    } catch (err) {
      process.send?.({ id: m.id, error: err instanceof Error ? err.stack : String(err) });
    }
  });
}
