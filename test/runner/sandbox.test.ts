// The process runtime's sandbox, tried from inside by an "attacker" app: it must not read the
// service's data, its source or anything outside the allowlist (host /dev, /sys, /root, /var/log),
// reach the host's loopback ports, see other processes, write outside its dirs, make a user
// namespace or undo the view; it must still work (cwd, HTTP on its port reached through the
// socket, exit code). Then the limits (cgroups, nproc, nofile, /tmp's size) and the egress socket.
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
  rmdirSync,
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
import { waitFor } from '../helpers/wait.ts';

const support = sandboxSupport();
const isRoot = process.getuid?.() === 0;
const APP_PORT = 8080; // inside the sandbox's own network namespace: always free
const ROOT = resolve(import.meta.dirname, '../..');
/** A log the service might keep (invitation links...), world-readable on the host. */
const VAR_LOG = `/var/log/fp-sandbox-test-${process.pid}.log`;
/** What the app's /dev holds, and nothing else. */
const ALLOWED_DEV = [
  'fd',
  'full',
  'null',
  'random',
  'shm',
  'stderr',
  'stdin',
  'stdout',
  'tty',
  'urandom',
  'zero',
];
const listHost = (dir: string) => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

// Everything the attacker tries. Each attempt records whether it (wrongly) succeeded.
const ATTACKER = String.raw`
import { readFileSync, readdirSync, writeFileSync, unlinkSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import http from 'node:http';
const cfg = JSON.parse(process.env.ATTACK);
const v = { reads: {}, dirs: {}, connects: {}, writes: {}, undo: {}, procs: {}, legit: {} };
v.outside = {};
const tryRead = (p) => { try { return readFileSync(p, 'utf8'); } catch (e) { return null; } };
const tryList = (d) => { try { return readdirSync(d); } catch (e) { return 'error ' + e.code; } };
for (const f of cfg.secrets) v.reads[f] = tryRead(f) !== null;
// Outside the allowlist: the service's source, /root, a log in /var/log, host /sys and devices.
for (const f of cfg.outside) v.outside[f] = tryRead(f) !== null || existsSync(f);
v.outside['/root exists'] = existsSync('/root');
v.sys = tryList('/sys');
v.dev = tryList('/dev');
v.outside.hostSys = cfg.hostSys.filter((n) => existsSync('/sys/' + n));
v.outside.hostDevices = cfg.hostDevices.filter((n) => existsSync('/dev/' + n));
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
for (const c of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
  v.undo[c] = new RegExp(c + ':\\s*(\\w+)').exec(status)[1];
const sh = (args) => { const r = spawnSync(args[0], args.slice(1), { encoding: 'utf8', timeout: 5000 }); return (r.stdout || '') + (r.stderr || ''); };
const secretText = cfg.secretText;
const D = cfg.dataDir;
v.undo.umount = sh(['umount', '-l', D]) + (tryRead(D + '/secret.key') ?? '');
v.undo.userns = sh(['unshare', '-Urm', 'sh', '-c', 'umount -l ' + D + '; cat ' + D + '/secret.key; mount -t proc proc /proc; ls /proc']);
v.undo.remountRw = sh(['unshare', '-Urm', 'sh', '-c', 'mount -o remount,rw / && echo REMOUNTED && touch /fp-evil && echo WROTE']);
v.undo.umountProc = sh(['unshare', '-Urmp', '--fork', 'sh', '-c', 'umount -l /proc && ls /proc']);
// No user namespace of its own, not even an empty one.
v.undo.userNamespace = spawnSync('unshare', ['-U', 'true'], { encoding: 'utf8', timeout: 5000 });
v.undo.userNamespace = { status: v.undo.userNamespace.status, stderr: v.undo.userNamespace.stderr };
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
        outside: [join(ROOT, 'package.json'), join(ROOT, 'src/runner/runtimes/sandbox.ts')]
          .concat(existsSync(VAR_LOG) ? [VAR_LOG] : [])
          .concat(listHost('/root').length ? [`/root/${listHost('/root')[0]}`] : []),
        hostSys: listHost('/sys'),
        hostDevices: listHost('/dev').filter((n) => !ALLOWED_DEV.includes(n)),
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
async function get(sock: string, path: string, timeoutMs = 15_000): Promise<string> {
  const once = () =>
    new Promise<string>((res, rej) => {
      const req = request({ socketPath: sock, path }, (r) => {
        let body = '';
        r.on('data', (c) => (body += c));
        r.on('end', () => res(body));
        r.on('error', rej);
      });
      req.on('error', rej);
      req.end();
    });
  const answer = await waitFor(
    `an answer to GET ${path} through ${sock}`,
    () => once().catch((err: Error) => err),
    { until: (r) => typeof r === 'string', timeoutMs, everyMs: 50 },
  );
  return answer as string;
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
      process.kill(-c.pid!, 'SIGTERM'); // forwarded to the sandbox's group (SIGKILL would not be)
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  });
  return c;
}

function logFile(f: Fixture, name = 'app.log'): { fd: number; read: () => string } {
  const path = join(f.base, name);
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
  // The service's files unreadable, its dirs absent (DATA_DIR only holds the checkout's path
  // when the checkout is inside it).
  for (const [p, ok] of Object.entries(verdict.reads)) expect(ok, `read ${p}`).toBe(false);
  expect(verdict.dirs[f.home]).toBe('error ENOENT');
  // Nothing outside the allowlist: no source tree, /root, /var/log, host /sys or devices.
  for (const [p, ok] of Object.entries(verdict.outside))
    expect(ok, `outside: ${p}`).toSatisfy((v) => v === false || (Array.isArray(v) && !v.length));
  expect(Object.keys(verdict.outside)).toContain(join(ROOT, 'package.json'));
  expect(verdict.sys).toEqual([]);
  expect([...verdict.dev].sort()).toEqual(ALLOWED_DEV);
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
  // No capabilities, no user namespace of its own, the view cannot be undone.
  for (const c of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
    expect(verdict.undo[c], c).toBe('0000000000000000');
  expect(verdict.undo.userNamespace.status, verdict.undo.userNamespace.stderr).not.toBe(0);
  expect(verdict.undo.userNamespace.stderr).toMatch(/No space left on device/); // the limit: 0
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

const appUid = () => (isRoot ? 65534 : process.getuid!());
const sleepMarker = () => `${300 + Math.floor(Math.random() * 1000)}.${process.pid}`;

/** Host pids whose command line (NUL-separated) satisfies `match`. */
function hostProcs(match: (cmdline: string) => boolean): string[] {
  return listHost('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return match(readFileSync(`/proc/${p}/cmdline`, 'utf8'));
      } catch {
        return false;
      }
    });
}
const sleeps = (n: number, marker: string) =>
  `i=0; while [ $i -lt ${n} ]; do sleep ${marker} & i=$((i+1)); done`;
const sleeping = (marker: string) => hostProcs((c) => c === `sleep\0${marker}\0`);

/** Ends a sandbox started by launch (through its launcher for a non-root agent). */
function stop(child: ChildProcess) {
  process.kill(-child.pid!, 'SIGTERM');
  return exited(child);
}

/** Waits until `ok` holds, at most 15 s; the checks after it say what failed. */
const until = (what: string, ok: () => boolean) =>
  waitFor(what, ok, { timeoutMs: 15_000, everyMs: 50 }).catch(() => {});

/** Runs a command in the sandbox (no socket unless given) to its end. */
async function runToEnd(
  f: Fixture,
  extra: Partial<SandboxOptions>,
  asUser: boolean,
  expose?: SandboxOptions['expose'],
) {
  const log = logFile(f);
  const child = launch({ ...options(f), expose, ...extra }, asUser, log.fd);
  const end = await exited(child);
  return { end, log: log.read() };
}

/** Why v1 cgroups cannot be made here (the test skips), or '' when they can. */
function cgroupWhy(): string {
  if (!isRoot) return 'not root: cannot make cgroups';
  for (const c of ['memory', 'pids']) {
    const probe = join('/sys/fs/cgroup', c, `fp-sandbox-probe-${process.pid}`);
    try {
      mkdirSync(probe);
      rmdirSync(probe);
    } catch (err) {
      return `no writable v1 ${c} hierarchy at /sys/fs/cgroup/${c} (${(err as Error).message})`;
    }
  }
  return '';
}
const CGROUP_WHY = support.ok ? cgroupWhy() : 'no sandbox';
const CGROUP_SKIP = CGROUP_WHY ? ` (skipped: ${CGROUP_WHY})` : '';

/** A v1 cgroup of this test (delegated to the app's uid for a non-root agent), removed after it. */
function makeCgroup(controller: string, asUser: boolean): string {
  const dir = join('/sys/fs/cgroup', controller, `fp-sandbox-${process.pid}-${Math.random()}`);
  mkdirSync(dir);
  if (asUser) chownSync(join(dir, 'cgroup.procs'), 65534, 65534);
  cleanups.unshift(() => {
    // Runs after the sandbox's processes were killed; the kernel needs a moment to empty it.
    for (let i = 0; i < 200; i++) {
      try {
        rmdirSync(dir);
        return;
      } catch {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
      }
    }
  });
  return dir;
}

/** The app of the egress test: talks to the egress port, the host's port, the socket's path. */
const EGRESS_CLIENT = `
import net from 'node:net';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
const [port, hostPort, sock] = process.argv.slice(2);
const talk = (opts) => new Promise((res) => {
  const s = net.connect({ ...opts, allowHalfOpen: true });
  let got = '';
  const t = setTimeout(() => { s.destroy(); res('timeout ' + got); }, 3000);
  s.on('connect', () => s.end('hello from inside'));
  s.on('data', (d) => (got += d));
  s.on('end', () => { clearTimeout(t); s.destroy(); res(got); });
  s.on('error', (e) => { clearTimeout(t); res('error ' + e.code); });
});
const out = {
  egress: await talk({ host: '127.0.0.1', port: Number(port) }),
  host: await talk({ host: '127.0.0.1', port: Number(hostPort) }),
  socket: await talk({ path: sock }),
  socketDir: existsSync(dirname(sock)),
};
console.log('RESULT ' + JSON.stringify(out));
`;

describe.skipIf(!support.ok)('process runtime sandbox', () => {
  beforeAll(() => {
    for (const p of ['/tmp/fp-sandbox-private', '/dev/shm/fp-sandbox-private'])
      rmSync(p, { force: true });
    try {
      writeFileSync(VAR_LOG, 'TOP-SECRET invitation link\n', { mode: 0o644 });
      chmodSync(VAR_LOG, 0o644);
    } catch {} // not root: the other outside files stand for it
  });
  afterAll(() => {
    for (const p of ['/tmp/fp-sandbox-private', '/dev/shm/fp-sandbox-private', VAR_LOG])
      rmSync(p, { force: true });
  });

  const VAR_TMP =
    existsSync('/var/tmp') && !resolve('/var/tmp').startsWith('/tmp') ? '/var/tmp' : undefined;

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

  it('killing the process group ends everything inside, detached children too', async () => {
    const f = await fixture(appUid());
    const log = logFile(f);
    const marker = sleepMarker();
    const child = launch(
      {
        ...options(f),
        expose: undefined,
        command: `setsid sleep ${marker} & sleep ${marker}; echo never`,
      },
      false,
      log.fd,
    );
    await until('both sleeps to run', () => sleeping(marker).length === 2);
    expect(sleeping(marker).length).toBe(2);
    process.kill(-child.pid!, 'SIGTERM');
    const end = await exited(child);
    expect(end.code, log.read()).toBe(143);
    await until('the sleeps to be gone', () => sleeping(marker).length === 0);
    expect(sleeping(marker)).toEqual([]);
    expect(log.read()).not.toContain('never');
  });

  for (const asUser of [false, true]) {
    const who = asUser ? 'agent as a normal user' : 'agent as root';
    describe.skipIf(!asUser && !isRoot)(`limits and egress (${who})`, () => {
      it.skipIf(!!CGROUP_WHY)(
        `the app and its forwarder are in the given cgroups${CGROUP_SKIP}`,
        async () => {
          const f = await fixture(appUid());
          const groups = ['memory', 'pids'].map((c) => makeCgroup(c, asUser));
          const log = logFile(f);
          const marker = sleepMarker();
          const child = launch(
            { ...options(f), cgroups: groups, command: `exec sleep ${marker}` },
            asUser,
            log.fd,
          );
          await until('the app to run', () => sleeping(marker).length === 1);
          const forwarder = (c: string) => /^[^\0]*\0[^\0]*forwarder\.mjs\0/.test(c);
          const inside = [
            ...sleeping(marker),
            ...hostProcs((c) => forwarder(c) && c.includes(f.sock)),
          ];
          expect(inside.length, log.read()).toBe(2); // the app and the forwarder
          for (const g of groups) {
            const procs = readFileSync(join(g, 'cgroup.procs'), 'utf8').split('\n');
            for (const pid of inside) expect(procs, `${g} holds ${pid}`).toContain(pid);
          }
          await stop(child);
        },
      );

      it.skipIf(!!CGROUP_WHY)(
        `a memory cgroup's limit kills an app that allocates past it${CGROUP_SKIP}`,
        async () => {
          const f = await fixture(appUid());
          const memory = makeCgroup('memory', asUser);
          writeFileSync(join(memory, 'memory.limit_in_bytes'), String(256 * 2 ** 20));
          const grow =
            'const a = []; for (let i = 0; i < 64; i++) a.push(Buffer.alloc(16 * 2 ** 20, 1)); ' +
            "console.log('allocated', a.length)";
          const { end, log } = await runToEnd(
            f,
            { cgroups: [memory], command: `exec "${process.execPath}" -e "${grow}"` },
            asUser,
          );
          expect(end.code, log).toBe(137);
          expect(log).not.toContain('allocated');
          expect(readFileSync(join(memory, 'memory.oom_control'), 'utf8')).toMatch(
            /oom_kill [1-9]/,
          );
        },
      );

      it('nproc stops 50 sleeps at the limit, counting this sandbox only; nofile', async () => {
        const f = await fixture(appUid());
        // Another sandbox of the same uid holding 21 processes: not counted against this one.
        const other = sleepMarker();
        const otherLog = logFile(f, 'other.log');
        launch(
          {
            ...options(f),
            expose: undefined,
            command: `${sleeps(20, other)}; exec sleep ${other}`,
          },
          asUser,
          otherLog.fd,
        );
        await until("the other sandbox's 21 sleeps", () => sleeping(other).length === 21);
        expect(sleeping(other).length, otherLog.read()).toBe(21);

        const marker = sleepMarker();
        const log = logFile(f);
        const child = launch(
          {
            ...options(f),
            expose: undefined,
            nproc: 10,
            nofile: 123,
            // dash gives up at the first fork refused: the loop runs in a subshell.
            command:
              `echo "nofile=$(ulimit -n)"; (${sleeps(50, marker)}; echo all started) 2>&1; ` +
              `echo loop over; exec sleep ${sleepMarker()}`,
          },
          asUser,
          log.fd,
        );
        await until('the loop to end', () => log.read().includes('loop over'));
        const started = sleeping(marker).length;
        expect(log.read()).toContain('loop over');
        expect(log.read()).not.toContain('all started');
        expect(started, log.read()).toBeGreaterThan(0);
        expect(started).toBeLessThanOrEqual(10);
        expect(log.read()).toContain('nofile=123');
        await stop(child);
      });

      it('/tmp and /dev/shm refuse writes past tmpMb', async () => {
        const f = await fixture(appUid());
        const fill = (d: string) =>
          `head -c 3145728 /dev/zero > ${d}/big; echo "${d} big=$?"; rm -f ${d}/big; ` +
          `head -c 1048576 /dev/zero > ${d}/small; echo "${d} small=$?"`;
        const { end, log } = await runToEnd(
          f,
          { tmpMb: 2, command: `${fill('/tmp')}; ${fill('/dev/shm')}` },
          asUser,
        );
        expect(end.code, log).toBe(0);
        for (const d of ['/tmp', '/dev/shm']) {
          expect(log).toContain(`${d} big=1`);
          expect(log).toContain(`${d} small=0`);
        }
      });

      it("egress: 127.0.0.1:port reaches the host's Unix socket, no other host port", async () => {
        const f = await fixture(appUid());
        const proxyDir = join(f.base, 'egress');
        mkdirSync(proxyDir, { mode: 0o755 });
        const proxySock = join(proxyDir, 'proxy.sock');
        const seen: string[] = [];
        const proxy = createServer({ allowHalfOpen: true }, (s) => {
          let got = '';
          s.on('data', (d) => (got += d));
          s.on('end', () => {
            seen.push(got);
            s.end(`proxy here: ${got}`);
          });
        });
        await new Promise<void>((r) => proxy.listen(proxySock, r));
        chmodSync(proxySock, 0o777);
        let hostConnections = 0;
        const host = createServer((s) => {
          hostConnections++;
          s.end('host here');
        });
        await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
        cleanups.push(() => {
          proxy.close();
          host.close();
        });
        const hostPort = (host.address() as { port: number }).port;
        writeFileSync(join(f.checkout, 'egress.mjs'), EGRESS_CLIENT);
        const { end, log } = await runToEnd(
          f,
          {
            network: 'host', // what process.ts passes for builds today: ignored
            egress: { socketPath: proxySock, port: 3128 },
            command: `exec "${process.execPath}" egress.mjs 3128 ${hostPort} ${proxySock}`,
          },
          asUser,
          { ...options(f).expose! }, // with expose too: one forwarder, both ways
        );
        expect(end.code, log).toBe(0);
        const out = JSON.parse(/RESULT (.*)/.exec(log)![1]!);
        expect(out.egress).toBe('proxy here: hello from inside');
        expect(seen).toEqual(['hello from inside']);
        expect(out.host).toMatch(/^error ECONNREFUSED/);
        expect(hostConnections).toBe(0);
        expect(out.socket).toBe('error ENOENT'); // the socket's dir is not in the app's view
        expect(out.socketDir).toBe(false);
      });
    });
  }

  it('refuses a cwd outside the writable dirs', async () => {
    const f = await fixture(isRoot ? 65534 : process.getuid!());
    expect(() => spawnSandboxed({ ...options(f), cwd: f.base })).toThrow(
      /not inside a writable dir/,
    );
  });

  it('refuses a writable dir in /proc, /sys or /dev, and (as root) the app as root', async () => {
    const f = await fixture(appUid());
    for (const d of ['/proc/self', '/sys/kernel', '/dev/shm'])
      expect(() => spawnSandboxed({ ...options(f), writable: [f.checkout, d] })).toThrow(
        /cannot make .* writable/,
      );
    if (isRoot)
      expect(() => spawnSandboxed({ ...options(f), uid: 0 })).toThrow(/cannot run as 0:65534/);
  });
});

describe.skipIf(support.ok)('process runtime sandbox (unsupported here)', () => {
  it('says why', () => {
    expect((support as { why: string }).why).toMatch(/./);
  });
});
