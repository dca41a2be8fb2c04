// Runs one build or fetch command, feeding its output to the frame's log line by line, with a
// time limit and cancellation; on failure the error carries the last lines, which is what a
// person reading the deployment needs.
import { spawn, type ChildProcess } from 'node:child_process';
import { lines } from '../../lines.ts';

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  onLine(line: string): void;
  signal?: AbortSignal;
  timeoutMs: number;
  /** How to start it; a plain detached spawn unless a runtime confines it. */
  spawner?: (
    cmd: string,
    args: string[],
    o: { cwd: string; env: NodeJS.ProcessEnv },
  ) => ChildProcess;
}

const plain = (cmd: string, args: string[], o: { cwd: string; env: NodeJS.ProcessEnv }) =>
  spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });

/** A command that did not exit 0: how it ended (`exit 128`, `SIGKILL`), and its last lines. */
export class CommandFailed extends Error {
  constructor(
    message: string,
    readonly how: string,
  ) {
    super(message);
  }
}

/** Runs a command; rejects with its last lines unless it exits 0 (a CommandFailed). */
export function run(cmd: string, args: string[], o: RunOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = (o.spawner ?? plain)(cmd, args, { cwd: o.cwd, env: o.env });
    const tail: string[] = [];
    const kill = () => {
      try {
        if (child.pid === undefined) throw new Error('not started');
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(kill, o.timeoutMs);
    o.signal?.addEventListener('abort', kill, { once: true });
    if (child.stdout) lines(child.stdout, o.onLine, tail);
    if (child.stderr) lines(child.stderr, o.onLine, tail);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', kill);
      if (code === 0) return resolve();
      const how = signal ?? `exit ${code}`;
      reject(
        new CommandFailed(
          `${[cmd, ...args].join(' ')} failed (${how})${tail.length ? `: ${tail.join(' | ')}` : ''}`,
          String(how),
        ),
      );
    });
  });
}

/** Runs a command and answers its first line of output ('' on failure). */
export async function firstLine(
  cmd: string,
  args: string[],
  o: Omit<RunOptions, 'onLine'>,
): Promise<string> {
  const out: string[] = [];
  try {
    await run(cmd, args, { ...o, onLine: (l) => out.push(l) });
  } catch {
    return '';
  }
  return out[0]?.trim() ?? '';
}
