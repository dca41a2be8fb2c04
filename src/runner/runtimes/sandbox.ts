// The sandbox of the `process` runtime: runs an app as a local process that cannot read the
// service's secrets (DATA_DIR, the agent's data dir, the agent user's HOME), reach the host's
// loopback ports (PostgreSQL) unless given the host's network, see or signal other processes,
// write outside its own dirs, or undo any of that. Linux namespaces through util-linux
// `unshare`/`setpriv` (no setuid helper, no dependency); works as root and as a normal user.
//
//   unshare [--user --map-root-user] --mount --pid --ipc --uts [--net] --fork --kill-child --mount-proc
//     bash sandbox.sh …          pid 1 there: loopback, forwarder, mounts, read-only remount, then exec:
//       unshare --pid --mount-proc [--user --map-user] … setpriv …   the app's own pid namespace
//         sh init                  reads the app's environment from fd 3, cd, runs the command
//           sh -c <command>        the app
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
  /** Directories replaced by empty ones inside: the service's DATA_DIR, the agent's data dir, HOME of the agent's user. */
  hide: string[];
  /** Directories the app may write, visible at their own paths even when inside a hidden one (its checkout, its volumes, an npm cache). */
  writable: string[];
  /** 'none': its own network namespace with only loopback; 'host': the host's network (builds need the npm registry). */
  network: 'none' | 'host';
  /** With network 'none': the Unix socket (a path on the host, outside every hidden dir or in a writable one) through which the host reaches 127.0.0.1:port inside. */
  expose?: { socketPath: string; port: number };
  /** stdio of the app, as for child_process.spawn (the caller passes a log file fd for 1 and 2). */
  stdio: ['ignore', number | 'pipe' | 'ignore', number | 'pipe' | 'ignore'];
  /** When the agent runs as root: the unprivileged uid/gid the app runs as (default 65534). The caller chowns writable dirs to it. */
  uid?: number;
  gid?: number;
}

const here = dirname(fileURLToPath(import.meta.url));
const SCRIPT = join(here, 'sandbox.sh');
const FORWARDER = join(here, 'forwarder.mjs');
/** The only environment of everything before the app's init (never the app's: LD_PRELOAD…). */
const TOOL_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
const TOOLS = [
  'unshare',
  'setpriv',
  'ip',
  'mount',
  'mountpoint',
  'bash',
  'sh',
  'env',
  'sort',
  'cut',
  'sed',
  'cat',
  'mkdir',
  'sleep',
];

function findTool(name: string): string | null {
  for (const dir of TOOL_ENV.PATH.split(':')) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return null;
}

const asRoot = () => process.getuid?.() === 0;

/** The outer unshare's arguments, up to and including the script's. */
function outerArgs(network: 'none' | 'host'): string[] {
  return [
    ...(asRoot() ? [] : ['--user', '--map-root-user']),
    '--mount',
    '--pid',
    '--ipc',
    '--uts',
    ...(network === 'none' ? ['--net'] : []),
    '--fork',
    '--kill-child',
    '--mount-proc',
    '--',
    'bash',
    SCRIPT,
  ];
}

function identity(o: { uid?: number; gid?: number }): string[] {
  if (asRoot()) return ['--root', String(o.uid ?? 65534), String(o.gid ?? 65534)];
  // Only reached on Linux (sandboxSupport), where both exist.
  return ['--user', String(process.getuid?.() ?? -1), String(process.getgid?.() ?? -1)];
}

let support: { ok: true } | { ok: false; why: string } | undefined;

/** Whether this machine can make the sandbox (unshare + user/mount/pid/net namespaces, `ip`); the reason if not. */
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
  // A real (empty) run: every namespace, loopback, the mounts, the nested namespace and setpriv.
  const envFd = openSync('/dev/null', 'r');
  try {
    const r = spawnSync(
      'unshare',
      [...outerArgs('none'), '--net', 'none', ...identity({}), '--cwd', '/', '--', 'exit 0'],
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

/** `export NAME='value'` lines, read by the app's init (names sh cannot hold are dropped). */
function envScript(env: NodeJS.ProcessEnv): string {
  let out = '';
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || v.includes('\0')) continue;
    out += `export ${k}='${v.replaceAll("'", `'\\''`)}'\n`;
  }
  return out;
}

/** Spawns the command in the sandbox, detached (its own process group: the caller kills -pgid). */
export function spawnSandboxed(o: SandboxOptions): ChildProcess {
  const writable = o.writable.map((d) => real(d, 'writable dir'));
  const hide = o.hide.filter((d) => existsSync(d)).map((d) => real(d, 'hidden dir'));
  const cwd = real(o.cwd, 'cwd');
  if (!writable.some((w) => inside(cwd, w)))
    throw new Error(`sandbox: cwd ${cwd} is not inside a writable dir`);
  // node must stay runnable when it is installed under a hidden dir (nvm in HOME): its prefix, read-only.
  const readonly: string[] = [];
  const nodePrefix = dirname(dirname(realpathSync(process.execPath)));
  if (hide.some((h) => inside(nodePrefix, h))) readonly.push(nodePrefix);

  const args = [...outerArgs(o.network), '--net', o.network];
  for (const d of hide) args.push('--hide', d);
  for (const d of writable) args.push('--writable', d);
  for (const d of readonly) args.push('--readonly', d);
  if (o.expose && o.network === 'none') {
    const { socketPath, port } = o.expose;
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new Error(`sandbox: bad port ${port}`);
    const sock = join(
      real(dirname(socketPath), 'socket dir'),
      socketPath.slice(dirname(socketPath).length + 1),
    );
    try {
      if (lstatSync(sock).isSocket()) unlinkSync(sock); // a stale one, else the ready check lies
    } catch {}
    args.push('--expose', sock, String(port), '--node', process.execPath, '--forwarder', FORWARDER);
  }
  args.push(...identity(o), '--cwd', cwd, '--', o.command);

  const child = spawn('unshare', args, {
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
