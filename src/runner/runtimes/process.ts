// The `process` runtime, for development on one's own code: each replica is a local process
// group running the release's command in its checkout. Where the machine allows it (Linux
// namespaces, sandbox.ts), the app runs in a sandbox: the agent's and the service's data
// hidden, the filesystem read-only but for its checkout and volumes, its own process and
// network namespaces (the agent reaches its port through a Unix socket). It has no memory
// limit and shares the kernel's resources: strangers' code belongs in the docker runtime.
// Output goes to a file per replica, so a replica can outlive its agent and be adopted.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fetchSource } from '../build/fetch.ts';
import { planOf } from '../build/plan.ts';
import { run } from '../build/command.ts';
import { tailFile } from '../log.ts';
import {
  freePort,
  isAlive,
  ownsGroup,
  signalGroup,
  signalOwnGroup,
  sleep,
  startTimeOf,
} from '../processes.ts';
import { spawnSandboxed, sandboxSupport } from './sandbox.ts';
import {
  BuildError,
  type Endpoint,
  type ExitInfo,
  type ReplicaRef,
  type ReplicaRuntime,
  type RunningReplica,
} from './runtime.ts';

export interface ProcessOptions {
  framesDir: string;
  volumesDir: string;
  /** Hidden from apps: the agent's data directory and whatever else the operator names. */
  hide: string[];
  /** Run apps in the sandbox (default: where the machine allows it). */
  sandbox: boolean;
}

const BUILT = '.frameplane-built';
/** The unprivileged user apps run as when the agent runs as root. */
const APP_UID = 65534;
const asRoot = () => process.getuid?.() === 0;

/** A clean environment for builds and apps: nothing of the agent's, which may hold its token. */
export function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { LANG: process.env.LANG ?? 'C.UTF-8', TZ: process.env.TZ };
  // The node that runs the agent is the node (and npm) the apps get, even if PATH lacks it.
  env.PATH = [dirname(process.execPath), process.env.PATH || '/usr/local/bin:/usr/bin:/bin'].join(
    ':',
  );
  return {
    ...env,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

function chownTree(dir: string) {
  if (!asRoot()) return;
  chownSync(dir, APP_UID, APP_UID);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) chownTree(p);
    else if (!e.isSymbolicLink()) chownSync(p, APP_UID, APP_UID);
  }
}

export function createProcessRuntime(o: ProcessOptions): ReplicaRuntime {
  const support = sandboxSupport();
  const sandboxed = o.sandbox && support.ok;
  const hide = [...new Set([...o.hide, homedir()])].filter((d) => d && d !== '/');
  const socketsDir = join(dirname(o.framesDir), 'sockets');

  const volumeDir = (id: string) => join(o.volumesDir, id);

  type Out = number | 'pipe';
  function spawnIn(
    cwd: string,
    command: string,
    env: NodeJS.ProcessEnv,
    writable: string[],
    stdio: Out,
    expose?: { socketPath: string; port: number },
  ): ChildProcess {
    if (!sandboxed)
      return spawn('sh', ['-c', command], {
        cwd,
        env,
        detached: true,
        stdio: ['ignore', stdio, stdio],
      });
    return spawnSandboxed({
      command,
      cwd,
      env,
      hide,
      writable,
      network: expose ? 'none' : 'host',
      expose,
      stdio: ['ignore', stdio, stdio],
      ...(asRoot() ? { uid: APP_UID, gid: APP_UID } : {}),
    });
  }

  function watch(
    pid: number,
    startTime: string | undefined,
    endpoint: Endpoint,
    logFile: string,
    offset: number,
    onLine: (l: string) => void,
    child?: ChildProcess,
  ): RunningReplica {
    const tailer = tailFile(logFile, offset, onLine);
    let detached = false;
    let resolveExit!: (e: ExitInfo) => void;
    const exit = new Promise<ExitInfo>((r) => {
      resolveExit = r;
    });
    let over = false;
    const done = (code: number | null, signal: string | null) => {
      if (over || detached) return;
      over = true;
      clearInterval(poll);
      // What the leader left behind must not hold on; only if the group is still ours. Our own
      // child's group stays ours after its leader is reaped: its id cannot be handed to a new
      // process while members remain.
      if (child) signalGroup(pid, 'SIGKILL');
      else signalOwnGroup(pid, startTime, 'SIGKILL');
      tailer.stop();
      resolveExit({ code, signal, oom: false });
    };
    child?.once('exit', (code, signal) => done(code, signal));
    child?.once('error', (err) => {
      onLine(`[frameplane] could not start: ${err.message}`);
      done(127, null);
    });
    // An adopted replica is not our child: its exit is noticed by polling.
    const poll = setInterval(() => {
      if (!child && !isAlive(pid, startTime)) done(null, null);
    }, 1000);
    poll.unref();
    return {
      endpoint,
      exit,
      async stop(graceMs) {
        if (over) return;
        const signal = (s: NodeJS.Signals) =>
          child ? signalGroup(pid, s) : signalOwnGroup(pid, startTime, s);
        signal('SIGTERM');
        const gone = await Promise.race([exit.then(() => true), sleep(graceMs).then(() => false)]);
        if (!gone) signal('SIGKILL');
        await Promise.race([exit, sleep(5000)]);
        done(null, 'SIGKILL');
      },
      detach() {
        detached = true;
        clearInterval(poll);
        tailer.stop(false);
      },
      ref: () => ({
        id: String(pid),
        startTime,
        endpoint,
        cursor: `${logFile}:${tailer.offset()}`,
      }),
    };
  }

  return {
    kind: 'process',

    async build(r) {
      for (const id of [r.frameId, r.deploymentId])
        if (!/^[A-Za-z0-9_-]{1,64}$/.test(id))
          throw new BuildError('image_pull_failed', `invalid id "${id}"`);
      const dir = join(o.framesDir, r.frameId, r.deploymentId);
      const marker = join(dir, BUILT);
      if (existsSync(marker)) {
        const plan = planOf(dir);
        const sha = readFileSync(marker, 'utf8').trim();
        if (!(plan instanceof Error)) {
          r.onFetched(sha);
          return {
            deploymentId: r.deploymentId,
            artifact: dir,
            command: plan.command,
            commitSha: sha,
          };
        }
      }
      const work = `${dir}.tmp-${process.pid}-${Date.now()}`;
      mkdirSync(dirname(dir), { recursive: true });
      try {
        const sha = await fetchSource({
          source: r.source,
          into: work,
          cwd: dirname(dir),
          onLine: r.onLine,
          signal: r.signal,
        });
        r.onFetched(sha);
        const plan = planOf(work);
        if (plan instanceof Error) throw new BuildError('build_failed', plan.message);
        chownTree(work);
        const cache = join(dirname(o.framesDir), 'npm-cache');
        mkdirSync(cache, { recursive: true });
        if (asRoot()) chownSync(cache, APP_UID, APP_UID);
        const env = { ...baseEnv(), HOME: work, npm_config_cache: cache };
        try {
          for (const step of plan.build) {
            r.onLine(`[frameplane] ${step}`);
            await run('sh', ['-c', step], {
              cwd: work,
              env,
              onLine: r.onLine,
              signal: r.signal,
              timeoutMs: 15 * 60_000,
              spawner: (_cmd, _args, so) => spawnIn(so.cwd, step, so.env, [work, cache], 'pipe'),
            });
          }
        } catch (err) {
          throw new BuildError('build_failed', (err as Error).message);
        }
        writeFileSync(join(work, BUILT), sha);
        rmSync(dir, { recursive: true, force: true });
        renameSync(work, dir);
        return {
          deploymentId: r.deploymentId,
          artifact: dir,
          command: plan.command,
          commitSha: sha,
        };
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },

    reuse: async (_frameId, release) => existsSync(join(release.artifact, BUILT)),

    async start(spec, onLine) {
      const dir = spec.release.artifact;
      const logFile = join(
        o.framesDir,
        spec.frameId,
        'logs',
        `${spec.deploymentId}.${spec.index}.log`,
      );
      mkdirSync(dirname(logFile), { recursive: true });
      const env: NodeJS.ProcessEnv = {
        ...baseEnv(),
        HOME: dir,
        ...spec.env,
        FRAMEPLANE_FRAME_ID: spec.frameId,
        FRAMEPLANE_DEPLOYMENT_ID: spec.deploymentId,
        FRAMEPLANE_REPLICA: String(spec.index),
      };
      const writable = [dir];
      for (const v of spec.volumes) {
        // No mounts here: each volume is a directory kept across deployments, named by a variable.
        const vd = volumeDir(v.id);
        mkdirSync(vd, { recursive: true });
        if (asRoot()) chownSync(vd, APP_UID, APP_UID);
        writable.push(vd);
        env[`FRAMEPLANE_VOLUME_${v.name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`] = vd;
      }
      let endpoint: Endpoint;
      let expose: { socketPath: string; port: number } | undefined;
      if (sandboxed) {
        // Socket paths are short (108 bytes at most): one directory, a digest per replica.
        const name = createHash('sha256')
          .update(`${spec.frameId}/${spec.deploymentId}/${spec.index}/${Date.now()}`)
          .digest('hex')
          .slice(0, 16);
        const sockDir = join(socketsDir, name);
        mkdirSync(sockDir, { recursive: true });
        expose = { socketPath: join(sockDir, 's'), port: spec.port };
        writable.push(sockDir);
        endpoint = { path: expose.socketPath };
        env.PORT = String(spec.port);
      } else {
        const port = await freePort();
        endpoint = { host: '127.0.0.1', port };
        env.PORT = String(port);
      }
      // The file may hold an earlier run of this slot, already sent: read only what comes now.
      const fd = openSync(logFile, 'a');
      const from = fstatSync(fd).size;
      let child: ChildProcess;
      try {
        child = spawnIn(dir, spec.release.command ?? 'npm start', env, writable, fd, expose);
      } finally {
        closeSync(fd);
      }
      child.unref();
      const pid = child.pid ?? -1;
      return watch(
        pid,
        pid > 0 ? startTimeOf(pid) : undefined,
        endpoint,
        logFile,
        from,
        onLine,
        child,
      );
    },

    async adopt(ref: ReplicaRef, onLine) {
      const pid = Number(ref.id);
      const cut = ref.cursor.lastIndexOf(':');
      const logFile = ref.cursor.slice(0, cut);
      // Adopted only if provably the process recorded, leading its own group: the agent will
      // signal that group. A replica recorded without a start time (an agent of the first
      // state format, or one without /proc) is left alone, never signalled.
      if (!isAlive(pid, ref.startTime) || !ownsGroup(pid, ref.startTime)) return undefined;
      return watch(
        pid,
        ref.startTime,
        ref.endpoint,
        logFile,
        Number(ref.cursor.slice(cut + 1)) || 0,
        onLine,
      );
    },

    async prune(frameId, keep) {
      const root = join(o.framesDir, frameId);
      if (!existsSync(root)) return;
      const kept = new Set(keep.map((r) => r.artifact));
      for (const name of readdirSync(root)) {
        const p = join(root, name);
        if (name === 'logs' || kept.has(p)) continue;
        if (name.includes(`.tmp-${process.pid}-`)) continue; // a fetch of ours in progress
        rmSync(p, { recursive: true, force: true });
      }
    },

    async forget(frameId) {
      rmSync(join(o.framesDir, frameId), { recursive: true, force: true });
    },
  };
}

export const processSandboxSupport = sandboxSupport;
