// Runs the CLI as a real process (node bin/frameplane.mjs), as a user's shell would.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { waitFor } from '../helpers/wait.ts';

const BIN = new URL('../../bin/frameplane.mjs', import.meta.url).pathname;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh config directory: one per simulated user. */
export const configHome = () => mkdtempSync(join(tmpdir(), 'frameplane-cli-'));

/** A user logged in through FRAMEPLANE_TOKEN, with a config directory of their own. */
export const userEnv = (server: string, token: string) => ({
  XDG_CONFIG_HOME: configHome(),
  FRAMEPLANE_SERVER: server,
  FRAMEPLANE_TOKEN: token,
});

export interface Started {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout has a line matching `pattern`; rejects after `ms`, or at the exit. */
  waitForOutput(pattern: RegExp, ms?: number): Promise<void>;
  /** The same on stderr, where the CLI shows progress (say, a --wait's status lines). */
  waitForStderr(pattern: RegExp, ms?: number): Promise<void>;
  done: Promise<Run>;
  /** `done`, or after `ms` the CLI killed and an error that shows what it printed. */
  ended(ms?: number): Promise<Run>;
}

export function start(
  args: string[],
  env: Record<string, string>,
  input?: string,
  cwd?: string,
): Started {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: env.XDG_CONFIG_HOME ?? tmpdir(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c) => {
    stdout += c;
  });
  child.stderr?.on('data', (c) => {
    stderr += c;
  });
  child.stdin?.end(input ?? '');
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  const waitForText = async (name: string, text: () => string, pattern: RegExp, ms: number) => {
    await waitFor(
      `${pattern} on the CLI's ${name}`,
      () => {
        if (pattern.test(text())) return true;
        if (child.exitCode !== null)
          throw new Error(`the CLI exited (${child.exitCode}) with no ${pattern} on its ${name}`);
        return false;
      },
      { timeoutMs: ms, everyMs: 50, context: () => `stdout: ${stdout}\nstderr: ${stderr}` },
    );
  };
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForOutput: (pattern, ms = 15_000) => waitForText('stdout', () => stdout, pattern, ms),
    waitForStderr: (pattern, ms = 15_000) => waitForText('stderr', () => stderr, pattern, ms),
    done,
    ended: async (ms = 20_000) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          const said = `stdout: ${stdout}\nstderr: ${stderr}`;
          reject(new Error(`the CLI ran on after ${ms} ms (${args.join(' ')})\n${said}`));
        }, ms);
      });
      try {
        return await Promise.race([done, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

export async function run(
  args: string[],
  env: Record<string, string>,
  input?: string,
  ms = 20_000,
  cwd?: string,
): Promise<Run> {
  const p = start(args, env, input, cwd);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), ms);
  const result = await p.done;
  clearTimeout(timer);
  return result;
}

/** `run` in the directory `cwd` (for `frameplane link`, which reads the directory). */
export const runIn = (cwd: string, args: string[], env: Record<string, string>, input?: string) =>
  run(args, env, input, 20_000, cwd);

/** Runs `args --json`, expects exit 0 and answers stdout parsed (undefined when empty). */
export async function runJson(args: string[], env: Record<string, string>) {
  const r = await run([...args, '--json'], env);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout ? JSON.parse(r.stdout) : undefined;
}

/** A refusal as the CLI reports it: exit `exit`, the problem's detail, status and code. */
export function expectProblem(r: Run, exit: number, status: number, code: string) {
  expect(r.code, r.stderr).toBe(exit);
  expect(r.stderr).toMatch(new RegExp(`^frameplane: .+ \\(${status} ${code}\\)$`, 'm'));
  expect(r.stdout).toBe('');
}

/** `frames create` of the app "web" (acme/app, port 8080) in project Shop, on `agentId`. */
export const createWebFrame = (agentId: string) => [
  'frames',
  'create',
  '-p',
  'Shop',
  '--name',
  'web',
  '--repo',
  'acme/app',
  '--port',
  '8080',
  '--agent',
  agentId,
];
