// The sandbox of the `process` runtime: runs an app (or a build step) as a local process that
// sees only an allowlist of the host's files (the system's programs and libraries, /etc, node;
// its own writable dirs; private /tmp, /dev/shm and a minimal /dev; never the service's source,
// DATA_DIR, HOME, /root, /var/log), reaches no host port (its own network namespace, loopback
// only, the agent's egress proxy through a Unix socket when asked), cannot see or signal other
// processes, write outside its dirs, make namespaces (so undo any of that) nor outgrow its
// cgroups and rlimits. Linux namespaces through util-linux `unshare`/`pivot_root`/`setpriv`
// (no setuid helper, no dependency); works as root and as a normal user.
//
//   unshare [--user --map-root-user] --mount --pid --ipc --uts --net --fork --kill-child
//           --mount-proc
//     bash sandbox.sh …  pid 1 there: cgroups, loopback, forwarder, new root, pivot_root,
//                        read-only, then exec:
//       unshare --user --keep-caps --pid --mount --fork --kill-child --mount-proc
//         sh             in the app's own user namespace (its uid/gid only): no more namespaces
//           [prlimit] setpriv …   nproc/nofile; the app's uid, no capabilities, no_new_privs
//             sh init    reads the app's environment from fd 3, cd, runs the command
//               sh -c <command>   the app
//
// The returned child is the outer unshare: it exits with the app's status (128+n for a signal),
// leads its own process group (every process inside is in it unless it moved itself), and when
// it dies the kernel kills its child, pid 1 of the outer namespace, hence everything inside.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, lstatSync, openSync, realpathSync, unlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SandboxOptions {
  /** Run with `sh -c`. */
  command: string;
  /** Working directory; must be inside one of `writable`. */
  cwd: string;
  env: NodeJS.ProcessEnv; // the complete environment of the app (nothing inherited)
  /**
   * Directories the app may write, at their own paths (its checkout, its volumes, its caches).
   * Never under /proc, /sys or /dev.
   */
  writable: string[];
  /** A Unix socket (a host path, bound by the sandbox): the host's way to 127.0.0.1:port inside. */
  expose?: { socketPath: string; port: number };
  /**
   * Outbound connections: the app's connections to 127.0.0.1:port inside go to the Unix socket
   * socketPath on the host, where the agent's egress proxy listens (the socket must accept the
   * app's uid). Its directory is not shown to the app.
   */
  egress?: { socketPath: string; port: number };
  /**
   * Cgroup directories made and configured by the caller (v1 controller dirs, or one v2 dir):
   * the sandbox joins each before it starts anything, so that the app and its forwarder count.
   * A non-root agent must be able to write their cgroup.procs.
   */
  cgroups?: string[];
  /**
   * RLIMIT_NPROC of the app: its processes and threads (node alone runs 11), counted in its own
   * user namespace (this sandbox only, not every app of the same uid).
   */
  nproc?: number;
  /** RLIMIT_NOFILE of the app. */
  nofile?: number;
  /** Size of the private /tmp, and of /dev/shm, in MB (each; default 256). */
  tmpMb?: number;
  /** stdio of the app, as for child_process.spawn (the caller passes a log file fd for 1 and 2). */
  stdio: ['ignore', number | 'pipe' | 'ignore', number | 'pipe' | 'ignore'];
  /**
   * When the agent runs as root: the unprivileged uid/gid the app runs as (default 65534). The
   * caller chowns writable dirs to it.
   */
  uid?: number;
  gid?: number;
  /** @deprecated Ignored: the app sees only an allowlist, which these were never in. */
  hide?: string[];
  /** @deprecated Ignored: every sandbox has its own network namespace (see `egress`). */
  network?: 'none' | 'host';
}

const here = dirname(fileURLToPath(import.meta.url));
const SCRIPT = join(here, 'sandbox.sh');
const FORWARDER = join(here, 'forwarder.mjs');
/** The only environment of everything before the app's init (never the app's: LD_PRELOAD…). */
const TOOL_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
const TOOLS = [
  'unshare',
  'setpriv',
  'prlimit',
  'pivot_root',
  'ip',
  'mount',
  'umount',
  'bash',
  'sh',
  'env',
  'sort',
  'cut',
  'sed',
  'cat',
  'mkdir',
  'rmdir',
  'ln',
  'readlink',
];
/** What the new root holds read-only, besides node's installation (see sandbox.sh). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];

function findTool(name: string): string | null {
  for (const dir of TOOL_ENV.PATH.split(':')) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}

const asRoot = () => process.getuid?.() === 0;

/** The outer unshare's arguments, up to and including the script's. */
function outerArgs(): string[] {
  return [
    ...(asRoot() ? [] : ['--user', '--map-root-user']),
    '--mount',
    '--pid',
    '--ipc',
    '--uts',
    '--net',
    '--fork',
    '--kill-child',
    '--mount-proc',
    '--',
    'bash',
    SCRIPT,
  ];
}

function identity(o: { uid?: number; gid?: number }): string[] {
  if (asRoot()) {
    const ids = [o.uid ?? 65534, o.gid ?? 65534];
    // Mapped to themselves on the host: 0 would be the host's root's files.
    if (!ids.every((n) => Number.isInteger(n) && n > 0 && n < 2 ** 32 - 1))
      throw new Error(`sandbox: the app cannot run as ${ids.join(':')}`);
    return ['--root', ...ids.map(String)];
  }
  // Only reached on Linux (sandboxSupport), where both exist.
  return ['--user', String(process.getuid?.() ?? -1), String(process.getgid?.() ?? -1)];
}

let support: { ok: true } | { ok: false; why: string } | undefined;

/** Whether this machine can make the sandbox (util-linux, namespaces, `ip`); the reason if not. */
export function sandboxSupport(): { ok: true } | { ok: false; why: string } {
  support ??= probeSandbox();
  return support;
}

function probeSandbox(): { ok: true } | { ok: false; why: string } {
  if (process.platform !== 'linux')
    return { ok: false, why: `namespaces need Linux, not ${process.platform}` };
  const missing = TOOLS.filter((t) => !findTool(t));
  if (missing.length)
    return {
      ok: false,
      why: `missing programs: ${missing.join(', ')} (util-linux, iproute2, coreutils)`,
    };
  // A real (empty) run: every namespace, loopback, the new root, the app's user namespace.
  const envFd = openSync('/dev/null', 'r');
  try {
    const r = spawnSync(
      'unshare',
      [...outerArgs(), ...identity({}), '--cwd', '/', '--', 'exit 0'],
      {
        cwd: '/',
        env: TOOL_ENV,
        stdio: ['ignore', 'ignore', 'pipe', envFd],
        timeout: 10_000,
        encoding: 'utf8',
      },
    );
    if (r.error) return { ok: false, why: `unshare: ${r.error.message}` };
    if (r.status !== 0) {
      const why =
        (r.stderr || '').trim().split('\n').slice(-3).join('; ') || `exit ${r.status ?? r.signal}`;
      return { ok: false, why: `cannot make the namespaces: ${why}` };
    }
  } finally {
    closeSync(envFd);
  }
  return { ok: true };
}

const inside = (path: string, dir: string) =>
  path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/** A directory that must exist, as the kernel sees it (mounts act on resolved paths). */
function real(path: string, what: string): string {
  if (!isAbsolute(path)) throw new Error(`sandbox: ${what} must be absolute: ${path}`);
  if (/[\n\0]/.test(path))
    throw new Error(`sandbox: ${what} has a newline: ${JSON.stringify(path)}`);
  return realpathSync(path);
}

/** A Unix socket's path with its directory resolved (the file itself may not exist yet). */
function socketPath(path: string, what: string): string {
  const dir = real(dirname(path), `${what} dir`);
  return join(dir, path.slice(dirname(path).length + 1));
}

function checkPort(port: number) {
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`sandbox: bad port ${port}`);
}

function checkCount(n: number | undefined, what: string, max: number) {
  if (n !== undefined && (!Number.isInteger(n) || n < 1 || n > max))
    throw new Error(`sandbox: bad ${what} ${n}`);
}

/** `export NAME='value'` lines, read by the app's init (names sh cannot hold are dropped). */
function envScript(env: NodeJS.ProcessEnv): string {
  let out = '';
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || v.includes('\0')) continue;
    out += `export ${k}='${v.replaceAll("'", `'\\''`)}'\n`;
  }
  return out;
}

/** The sandbox's arguments after the outer unshare's (see sandbox.sh's usage). */
function scriptArgs(o: SandboxOptions): string[] {
  const writable = o.writable.map((d) => real(d, 'writable dir'));
  for (const d of writable)
    if (d === '/' || ['/proc', '/sys', '/dev'].some((p) => inside(d, p)))
      throw new Error(`sandbox: cannot make ${d} writable`);
  const cwd = real(o.cwd, 'cwd');
  if (!writable.some((w) => inside(cwd, w)))
    throw new Error(`sandbox: cwd ${cwd} is not inside a writable dir`);
  checkCount(o.nproc, 'nproc', 1 << 22);
  checkCount(o.nofile, 'nofile', 1 << 30);
  checkCount(o.tmpMb, 'tmpMb', 1 << 20);

  const args: string[] = [];
  for (const c of o.cgroups ?? []) {
    const dir = real(c, 'cgroup');
    if (!existsSync(join(dir, 'cgroup.procs'))) throw new Error(`sandbox: not a cgroup: ${c}`);
    args.push('--cgroup', dir);
  }
  for (const d of writable) args.push('--writable', d);
  // node stays runnable when installed outside the system's dirs (nvm in HOME, /opt): its
  // prefix, read-only (or its own dir, when that prefix would be /).
  const node = realpathSync(process.execPath);
  if (!SYSTEM_DIRS.some((d) => inside(node, d))) {
    const prefix = dirname(dirname(node));
    args.push('--readonly', prefix === '/' ? dirname(node) : prefix);
  }
  if (o.tmpMb !== undefined) args.push('--tmp-mb', String(o.tmpMb));
  if (o.nproc !== undefined) args.push('--nproc', String(o.nproc));
  if (o.nofile !== undefined) args.push('--nofile', String(o.nofile));
  if (o.expose) {
    checkPort(o.expose.port);
    const sock = socketPath(o.expose.socketPath, 'expose socket');
    try {
      if (lstatSync(sock).isSocket()) unlinkSync(sock); // a stale one, else the ready check lies
    } catch {}
    args.push('--expose', sock, String(o.expose.port));
  }
  if (o.egress) {
    checkPort(o.egress.port);
    if (o.egress.port === o.expose?.port)
      throw new Error(`sandbox: egress and expose on the same port ${o.egress.port}`);
    args.push('--egress', socketPath(o.egress.socketPath, 'egress socket'), String(o.egress.port));
  }
  if (o.expose || o.egress) args.push('--node', process.execPath, '--forwarder', FORWARDER);
  args.push(...identity(o), '--cwd', cwd, '--', o.command);
  return args;
}

/** Spawns the command in the sandbox, detached (its own process group: the caller kills -pgid). */
export function spawnSandboxed(o: SandboxOptions): ChildProcess {
  const child = spawn('unshare', [...outerArgs(), ...scriptArgs(o)], {
    cwd: '/', // never a host dir: a cwd kept from before the mounts would see under them
    env: TOOL_ENV,
    detached: true,
    stdio: [o.stdio[0], o.stdio[1], o.stdio[2], 'pipe'],
  });
  const envPipe = child.stdio[3] as NodeJS.WritableStream & {
    on(e: 'error', f: () => void): unknown;
  };
  envPipe.on('error', () => {}); // the sandbox failed before reading it: its exit tells
  envPipe.end(envScript(o.env));
  return child;
}
