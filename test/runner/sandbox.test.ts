// The process runtime's sandbox, tried from inside by an "attacker" app: it must not read the
// hidden dirs, reach the host's loopback ports, see other processes, write outside its dirs or
// undo the masks; it must still work (cwd, HTTP on its port reached through the socket, exit code).
// Both ways the agent runs: as root (the app as uid 65534) and as a normal user (tested from root
// by running a launcher under setpriv as uid 65534; directly when the tests run as a user).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  sandboxSupport,
  spawnSandboxed,
  type SandboxOptions,
} from '../../src/runner/runtimes/sandbox.ts';

const support = sandboxSupport();
const isRoot = process.getuid?.() === 0;
const APP_PORT = 8080; // inside the sandbox's own network namespace: always free
const ROOT = resolve(import.meta.dirname, '../..');

// Everything the attacker tries. Each attempt records whether it (wrongly) succeeded.
const ATTACKER = String.raw`
import { readFileSync, readdirSync, writeFileSync, unlinkSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import http from 'node:http';
const cfg = JSON.parse(process.env.ATTACK);
const v = { reads: {}, dirs: {}, connects: {}, writes: {}, undo: {}, procs: {}, legit: {} };
const tryRead = (p) => { try { return readFileSync(p, 'utf8'); } catch (e) { return null; } };
for (const f of cfg.secrets) v.reads[f] = tryRead(f) !== null;
for (const f of cfg.secrets) v.reads['/proc/1/root' + f] = tryRead('/proc/1/root' + f) !== null;
for (const d of cfg.hidden) { try { v.dirs[d] = readdirSync(d); } catch (e) { v.dirs[d] = 'error ' + e.code; } }
const connect = (host, port) => new Promise((res) => {
  const s = port === undefined ? net.connect({ path: host }) : net.connect({ host, port }); const t = setTimeout(() => { s.destroy(); res(false); }, 1500);
  s.on('connect', () => { clearTimeout(t); s.destroy(); res(true); });
  s.on('error', () => { clearTimeout(t); res(false); });
});
v.connects['127.0.0.1:' + cfg.pgPort] = await connect('127.0.0.1', cfg.pgPort);
v.connects['localhost:' + cfg.pgPort] = await connect('localhost', cfg.pgPort);
v.connects[cfg.pgSocket] = await connect(cfg.pgSocket);
for (const p of cfg.mustNotWrite) {
  try { writeFileSync(p, 'evil'); v.writes[p] = true; } catch (e) { v.writes[p] = false; }
}
for (const p of cfg.privateWrites) { try { writeFileSync(p, 'x'); v.legit['private ' + p] = true; } catch { v.legit['private ' + p] = false; } }
// Processes: only the sandbox's own, none of the host's, none signalable.
const pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
v.procs.count = pids.length;
v.procs.foreign = pids.map((p) => tryRead('/proc/' + p + '/cmdline') || '').filter((c) => c.includes(cfg.hostMarker)).length;
v.procs.signal = {};
for (const pid of cfg.hostPids) { try { process.kill(pid, 0); v.procs.signal[pid] = true; } catch (e) { v.procs.signal[pid] = false; } }
const status = readFileSync('/proc/self/status', 'utf8');
v.undo.capEff = /CapEff:\s*(\w+)/.exec(status)[1];
const sh = (args) => { const r = spawnSync(args[0], args.slice(1), { encoding: 'utf8', timeout: 5000 }); return (r.stdout || '') + (r.stderr || ''); };
const secretText = cfg.secretText;
const D = cfg.dataDir;
v.undo.umount = sh(['umount', '-l', D]) + (tryRead(D + '/secret.key') ?? '');
v.undo.userns = sh(['unshare', '-Urm', 'sh', '-c', 'umount -l ' + D + '; cat ' + D + '/secret.key; mount -t proc proc /proc; ls /proc']);
v.undo.remountRw = sh(['unshare', '-Urm', 'sh', '-c', 'mount -o remount,rw / && echo REMOUNTED && touch /fp-evil && echo WROTE']);
v.undo.umountProc = sh(['unshare', '-Urmp', '--fork', 'sh', '-c', 'umount -l /proc && ls /proc']);
v.undo.leaked = [v.undo.umount, v.undo.userns, v.undo.remountRw, v.undo.umountProc].some((s) => s.includes(secretText) || s.includes('REMOUNTED') || s.includes('WROTE'));
// Legitimate things.
try { writeFileSync('written-in-cwd.txt', 'hello'); v.legit.cwd = readFileSync('written-in-cwd.txt', 'utf8') === 'hello'; } catch (e) { v.legit.cwd = String(e); }
for (const w of cfg.otherWritable) { try { writeFileSync(w + '/w.txt', 'x'); v.legit[w] = true; } catch (e) { v.legit[w] = String(e); } }
v.legit.system = !!tryRead('/etc/os-release') && !!tryRead(process.execPath).length;
v.legit.env = process.env.GREETING;
v.legit.uid = process.getuid();
console.log(JSON.stringify(v));
http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(v));
  if (req.url === '/exit') setTimeout(() => process.exit(7), 20);
}).listen(${APP_PORT}, '127.0.0.1');
`;

interface Fixture {
  base: string;
  data: string;
  home: string;
  checkout: string;
  volume: string;
  sock: string;
  pg: Server;
  pgPort: number;
  /** Like the embedded PostgreSQL's: a Unix socket in DATA_DIR. */
  pgSocket: string;
  secrets: string[];
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

interface Layout {
  /** Where the fake DATA_DIR and HOME live: os.tmpdir() (under the sandbox's private /tmp) or /var/tmp (only the masks hide them). */
  parent?: string;
  /** The checkout inside DATA_DIR (a hidden dir holding a writable one). */
  checkoutInData?: boolean;
}

async function fixture(appUid: number, opts: Layout = {}): Promise<Fixture> {
  const base = mkdtempSync(join(opts.parent ?? tmpdir(), 'fp-sandbox-'));
  chmodSync(base, 0o755);
  const data = join(base, 'data');
  const home = join(base, 'agent-home');
  const checkout = opts.checkoutInData
    ? join(data, 'frames', 'f1', 'checkout')
    : join(base, 'checkout');
  const volume = join(base, 'volume');
  for (const d of [data, join(data, 'postgres'), home, checkout, volume, join(base, 'run')])
    mkdirSync(d, { recursive: true });
  const secrets = [
    join(data, 'secret.key'),
    join(data, 'builtin-agent.json'),
    join(data, 'postgres', 'postmaster.pid'),
    join(home, '.npmrc'),
  ];
  for (const f of secrets) writeFileSync(f, `TOP-SECRET-${f}`, { mode: 0o600 });
  writeFileSync(join(checkout, 'attacker.mjs'), ATTACKER);
  // Owned by the app's (or the agent's) uid, so that only the sandbox keeps the secrets away.
  if (isRoot)
    for (const p of [
      base,
      data,
      join(data, 'postgres'),
      home,
      checkout,
      volume,
      join(base, 'run'),
      ...secrets,
    ])
      chownSync(p, appUid, appUid);
  if (isRoot && opts.checkoutInData)
    for (const p of [join(data, 'frames'), join(data, 'frames', 'f1')])
      chownSync(p, appUid, appUid);
  const pg = createServer((s) => s.end('postgres here\n'));
  await new Promise<void>((r) => pg.listen(0, '127.0.0.1', r));
  const pgPort = (pg.address() as { port: number }).port;
  const pgSocket = join(data, 'postgres-socket', '.s.PGSQL.5432');
  mkdirSync(dirname(pgSocket));
  const pgUnix = createServer((s) => s.end('postgres here\n'));
  await new Promise<void>((r) => pgUnix.listen(pgSocket, r));
  chmodSync(pgSocket, 0o777);
  cleanups.push(() => {
    pg.close();
    pgUnix.close();
    rmSync(base, { recursive: true, force: true });
  });
  return {
    base,
    data,
    home,
    checkout,
    volume,
    sock: join(base, 'run', 'app.sock'),
    pg,
    pgPort,
    pgSocket,
    secrets,
  };
}

function options(f: Fixture, extra: Partial<SandboxOptions> = {}): SandboxOptions {
  const hostMarker = 'vitest';
  return {
    command: `exec "${process.execPath}" attacker.mjs`,
    cwd: f.checkout,
    env: {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      GREETING: "it's me",
      ATTACK: JSON.stringify({
        secrets: f.secrets,
        secretText: 'TOP-SECRET',
        hidden: [f.data, f.home],
        dataDir: f.data,
        pgPort: f.pgPort,
        pgSocket: f.pgSocket,
        hostPids: [process.pid, process.ppid],
        hostMarker,
        // The fixture's own dirs (owned by the app's uid) when they are not in the private /tmp.
        mustNotWrite: [
          '/fp-evil',
          '/etc/fp-evil',
          '/usr/fp-evil',
          '/var/tmp/fp-evil',
          join(f.data, 'fp-evil'),
          join(f.home, 'fp-evil'),
        ].concat(
          f.base.startsWith('/tmp/')
            ? []
            : [join(f.base, 'fp-evil'), join(f.base, 'run', 'fp-evil')],
        ),
        privateWrites: ['/tmp/fp-sandbox-private', '/dev/shm/fp-sandbox-private'],
        otherWritable: [f.volume],
      }),
    },
    hide: [f.data, f.home],
    writable: [f.checkout, f.volume],
    network: 'none',
    expose: { socketPath: f.sock, port: APP_PORT },
    stdio: ['ignore', 'ignore', 'ignore'],
    ...extra,
  };
}

/** GET path through the Unix socket, retrying while the app starts. */
async function get(sock: string, path: string, deadline = Date.now() + 15_000): Promise<string> {
  for (;;) {
    try {
      return await new Promise<string>((res, rej) => {
        const req = request({ socketPath: sock, path }, (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => res(body));
          r.on('error', rej);
        });
        req.on('error', rej);
        req.end();
      });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const exited = (c: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => {
    if (c.exitCode !== null || c.signalCode !== null) r({ code: c.exitCode, signal: c.signalCode });
    else c.once('exit', (code, signal) => r({ code, signal }));
  });

/** Runs the sandbox as the agent would: in this process, or (for a non-root agent tested as root) in a launcher run as uid 65534. */
function launch(o: SandboxOptions, asUser: boolean, logFd: number): ChildProcess {
  if (!asUser || !isRoot) {
    const c = spawnSandboxed({ ...o, stdio: ['ignore', logFd, logFd] });
    cleanups.push(() => {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {}
    });
    return c;
  }
  const dir = mkdtempSync(join(tmpdir(), 'fp-sandbox-launcher-'));
  chmodSync(dir, 0o755);
  const launcher = join(dir, 'launcher.ts');
  writeFileSync(
    launcher,
    `import { spawnSandboxed } from ${JSON.stringify(join(ROOT, 'src/runner/runtimes/sandbox.ts'))};
const o = JSON.parse(process.env.SANDBOX_OPTIONS!);
const c = spawnSandboxed({ ...o, stdio: ['ignore', 1, 2] });
for (const s of ['SIGTERM', 'SIGINT'] as const) process.on(s, () => { try { process.kill(-c.pid!, s); } catch {} });
c.on('exit', (code, signal) => process.exit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15)));
`,
  );
  const c = spawn(
    'setpriv',
    [
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      process.execPath,
      '--import',
      'tsx',
      launcher,
    ],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: '/nonexistent', SANDBOX_OPTIONS: JSON.stringify(o) },
      stdio: ['ignore', logFd, logFd],
      detached: true,
    },
  );
  cleanups.push(() => {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  });
  return c;
}

function logFile(f: Fixture): { fd: number; read: () => string } {
  const path = join(f.base, 'app.log');
  const fd = openSync(path, 'w');
  cleanups.unshift(() => closeSync(fd));
  return { fd, read: () => readFileSync(path, 'utf8') };
}

async function attack(asUser: boolean, opts: Layout = {}) {
  const appUid = isRoot ? 65534 : process.getuid!();
  const f = await fixture(appUid, opts);
  const log = logFile(f);
  const child = launch(options(f), asUser, log.fd);
  let verdict: any;
  try {
    verdict = JSON.parse(await get(f.sock, '/'));
  } catch (err) {
    throw new Error(`no answer through the socket (${err}); log:\n${log.read()}`);
  }
  await get(f.sock, '/exit');
  const end = await exited(child);
  if (process.env.SANDBOX_TEST_VERBOSE) console.log(JSON.stringify(verdict, null, 1));
  return { f, verdict, end, log: log.read() };
}

function expectContained(f: Fixture, verdict: any, expectedUid: number) {
  // Hidden files unreadable, hidden dirs empty (but for the checkout's path when inside).
  for (const [p, ok] of Object.entries(verdict.reads)) expect(ok, `read ${p}`).toBe(false);
  expect(verdict.dirs[f.home]).toEqual([]);
  // No host loopback.
  for (const [p, ok] of Object.entries(verdict.connects)) expect(ok, `connect ${p}`).toBe(false);
  // Read-only outside its dirs.
  for (const [p, ok] of Object.entries(verdict.writes)) expect(ok, `write ${p}`).toBe(false);
  for (const p of [
    '/fp-evil',
    '/etc/fp-evil',
    '/var/tmp/fp-evil',
    join(f.data, 'fp-evil'),
    join(f.base, 'fp-evil'),
    join(f.base, 'run', 'fp-evil'),
  ]) {
    expect(existsSync(p), p).toBe(false);
  }
  // Private /tmp and /dev/shm: writable inside, nothing reaches the host.
  expect(verdict.legit['private /tmp/fp-sandbox-private']).toBe(true);
  expect(existsSync('/tmp/fp-sandbox-private')).toBe(false);
  expect(existsSync('/dev/shm/fp-sandbox-private')).toBe(false);
  // Own processes only, nothing of the host visible or signalable.
  expect(verdict.procs.foreign).toBe(0);
  expect(verdict.procs.count).toBeLessThan(10);
  for (const [p, ok] of Object.entries(verdict.procs.signal)) expect(ok, `signal ${p}`).toBe(false);
  // No capabilities, masks cannot be undone.
  expect(verdict.undo.capEff).toBe('0000000000000000');
  expect(verdict.undo.leaked, JSON.stringify(verdict.undo)).toBe(false);
  // What it may do.
  expect(verdict.legit.cwd).toBe(true);
  expect(verdict.legit[f.volume]).toBe(true);
  expect(readFileSync(join(f.checkout, 'written-in-cwd.txt'), 'utf8')).toBe('hello');
  expect(readFileSync(join(f.volume, 'w.txt'), 'utf8')).toBe('x');
  expect(verdict.legit.system).toBe(true);
  expect(verdict.legit.env).toBe("it's me");
  expect(verdict.legit.uid).toBe(expectedUid);
}

describe.skipIf(!support.ok)('process runtime sandbox', () => {
  beforeAll(() => {
    for (const p of ['/tmp/fp-sandbox-private', '/dev/shm/fp-sandbox-private'])
      rmSync(p, { force: true });
  });
  afterAll(() => {
    for (const p of ['/tmp/fp-sandbox-private', '/dev/shm/fp-sandbox-private'])
      rmSync(p, { force: true });
  });

  const VAR_TMP =
    existsSync('/var/tmp') && !resolve('/var/tmp').startsWith('/tmp') ? '/var/tmp' : undefined;
  const appUid = () => (isRoot ? 65534 : process.getuid!());

  for (const asUser of [false, true]) {
    const who = asUser
      ? 'agent as a normal user (the app as that user)'
      : 'agent as root (the app as uid 65534)';
    describe.skipIf(!asUser && !isRoot)(who, () => {
      it('the app cannot reach secrets, loopback, processes, the system, nor undo the masks; it serves through the socket, writes its dirs, its exit code comes back', async () => {
        const { f, verdict, end, log } = await attack(asUser);
        expectContained(f, verdict, appUid());
        expect(end, log).toEqual({ code: 7, signal: null });
      });

      it.skipIf(!VAR_TMP)(
        'outside the private /tmp (DATA_DIR in /var/tmp): a hidden dir holding the writable checkout shows the checkout and nothing else',
        async () => {
          const { f, verdict, end, log } = await attack(asUser, {
            parent: VAR_TMP,
            checkoutInData: true,
          });
          expectContained(f, verdict, appUid());
          expect(verdict.dirs[f.data]).toEqual(['frames']);
          expect(end, log).toEqual({ code: 7, signal: null });
        },
      );
    });
  }

  it("network 'host' reaches the host's loopback; killing the process group ends everything inside, detached children too", async () => {
    const f = await fixture(isRoot ? 65534 : process.getuid!());
    const log = logFile(f);
    const marker = `${300 + Math.floor(Math.random() * 1000)}.4242`;
    const child = launch(
      {
        ...options(f),
        network: 'host',
        expose: undefined,
        command: `"${process.execPath}" -e "require('net').connect(${f.pgPort}, '127.0.0.1').on('data', d => { console.log('GOT ' + d); })" & setsid sleep ${marker} & sleep ${marker}; echo never`,
      },
      false,
      log.fd,
    );
    const deadline = Date.now() + 10_000;
    while (!log.read().includes('GOT postgres here') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(log.read()).toContain('GOT postgres here');
    const sleeping = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
          } catch {
            return false;
          }
        });
    while (sleeping().length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(sleeping().length).toBe(2);
    process.kill(-child.pid!, 'SIGTERM');
    const end = await exited(child);
    expect(end.code, log.read()).toBe(143);
    await new Promise((r) => setTimeout(r, 100));
    expect(sleeping()).toEqual([]);
    expect(log.read()).not.toContain('never');
  });

  it('refuses a cwd outside the writable dirs', async () => {
    const f = await fixture(isRoot ? 65534 : process.getuid!());
    expect(() => spawnSandboxed({ ...options(f), cwd: f.base })).toThrow(
      /not inside a writable dir/,
    );
  });
});

describe.skipIf(support.ok)('process runtime sandbox (unsupported here)', () => {
  it('says why', () => {
    expect((support as { why: string }).why).toMatch(/./);
  });
});
