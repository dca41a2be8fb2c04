// How the process runtime confines what it runs of a frame, builds and replicas alike: in the
// namespace sandbox where the machine allows it (sandbox.ts), as the frame's own uid when the
// agent is root (frame-uids.ts), in a control group with the frame's limits where the machine
// allows it (cgroups.ts), and for builds, with no network but the egress proxy (egress.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, lstatSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { AgentLog } from '../log.ts';
import { startEgressProxy } from '../egress.ts';
import type { AllowRule } from '../egress-policy.ts';
import { handOver } from '../tenant-files.ts';
import { cgroupSupport, makeCgroup, type Cgroup, type Limits } from './cgroups.ts';
import { frameUids } from './frame-uids.ts';
import { sandboxSupport, spawnSandboxed } from './sandbox.ts';

export interface ConfineOptions {
  /** The agent's directory for its own files (the egress socket, the uid table). */
  stateDir: string;
  /** Directories hidden from apps (only where no sandbox can be made, nothing hides them). */
  hide: string[];
  sandbox: boolean;
  limits: Limits;
  /** Builds get more memory than a replica: installing dependencies takes more than running. */
  buildMemoryMb: number;
  egressAllow: AllowRule[];
  log?: AgentLog;
}

/** The port a build's HTTP proxy variables name, inside its own network namespace. */
const EGRESS_PORT = 3128;
/** Files open per process of a frame, as a container's default. */
const NOFILE = 65536;

export interface Spawned {
  child: ChildProcess;
  cgroup?: Cgroup;
}

export interface RunIn {
  frameId: string;
  cwd: string;
  command: string;
  env: NodeJS.ProcessEnv;
  writable: string[];
  stdio: number | 'pipe';
  /** A build: the egress proxy instead of the app's exposed port. */
  build?: boolean;
  expose?: { socketPath: string; port: number };
  /** The name of its control group (unique per replica or build). */
  cgroupName: string;
}

export function createConfinement(o: ConfineOptions) {
  const sandboxed = o.sandbox && sandboxSupport().ok;
  const root = process.getuid?.() === 0;
  const uids = root ? frameUids(join(o.stateDir, 'frame-uids.json')) : undefined;
  const groups = cgroupSupport();
  if (!groups.ok) o.log?.warn({ why: groups.why }, 'frames run without cgroup limits');
  let egress: Promise<{ server: Server; socketPath: string }> | undefined;
  let egressSocket: string | undefined;

  /** The proxy starts with the first build and lives as long as the agent. */
  const proxy = () =>
    (egress ??= (async () => {
      const dir = join(o.stateDir, 'egress');
      mkdirSync(dir, { recursive: true, mode: 0o755 });
      const socketPath = join(dir, 'proxy.sock');
      const server = await startEgressProxy({
        socketPath,
        allow: o.egressAllow,
        onRefused: (target, why) => o.log?.info({ target, why }, 'build egress refused'),
      });
      server.unref();
      egressSocket = socketPath;
      return { server, socketPath };
    })());

  const identity = (frameId: string) => {
    const uid = uids?.of(frameId);
    return uid === undefined ? undefined : { uid, gid: uid };
  };

  return {
    sandboxed,
    identity,
    /** Forgets the frame's uid (its files go with it). */
    release: (frameId: string) => uids?.release(frameId),

    /** Makes `dir` the frame's (when root): its tree, unless its top already is. */
    own(dir: string, frameId: string) {
      const id = identity(frameId);
      mkdirSync(dir, { recursive: true });
      if (!id) return;
      if (lstatSync(dir).uid !== id.uid) handOver(dir, id.uid, id.gid);
    },

    /** A directory of the agent that the frame's processes may enter (the tree above is root's). */
    ownTop(dir: string, frameId: string) {
      const id = identity(frameId);
      mkdirSync(dir, { recursive: true });
      if (id) chownSync(dir, id.uid, id.gid);
    },

    /** Before a build's first step: its egress proxy listens. */
    egressReady: async () => {
      if (sandboxed) await proxy();
    },

    spawn(r: RunIn): Spawned {
      const id = identity(r.frameId);
      const limits = r.build ? { ...o.limits, memoryMb: o.buildMemoryMb } : o.limits;
      const cgroup = groups.ok ? makeCgroup(r.cgroupName, limits, groups.version) : undefined;
      if (!sandboxed) {
        const child = spawn('sh', ['-c', r.command], {
          cwd: r.cwd,
          env: r.env,
          detached: true,
          stdio: ['ignore', r.stdio, r.stdio],
          ...(id ?? {}),
        });
        return { child, cgroup };
      }
      let env = r.env;
      let egressOpt: { socketPath: string; port: number } | undefined;
      if (r.build) {
        if (!egressSocket) throw new Error('a build spawned before egressReady()');
        egressOpt = { socketPath: egressSocket, port: EGRESS_PORT };
        env = { ...env, ...proxyEnv(EGRESS_PORT) };
      }
      const child = spawnSandboxed({
        command: r.command,
        cwd: r.cwd,
        env,
        hide: o.hide,
        writable: r.writable,
        network: 'none',
        ...(r.expose ? { expose: r.expose } : {}),
        ...(egressOpt ? { egress: egressOpt } : {}),
        stdio: ['ignore', r.stdio, r.stdio],
        cgroups: cgroup?.dirs ?? [],
        nproc: o.limits.pids,
        nofile: NOFILE,
        tmpMb: limits.memoryMb,
        ...(id ?? {}),
      });
      return { child, cgroup };
    },

    close: async () => {
      const p = await egress;
      await new Promise<void>((r) => (p ? p.server.close(() => r()) : r()));
    },
  };
}

export type Confinement = ReturnType<typeof createConfinement>;

/** Every spelling of the proxy variables that npm, git, curl and Node's fetch read. */
function proxyEnv(port: number): NodeJS.ProcessEnv {
  const url = `http://127.0.0.1:${port}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
    NO_PROXY: '',
    no_proxy: '',
  };
}
