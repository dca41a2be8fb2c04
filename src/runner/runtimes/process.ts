// The `process` runtime: each replica is a local process group running the release's command in
// its checkout, confined as confine.ts says: in the namespace sandbox where the machine allows
// it (the agent's and the service's data out of sight, its own process and network namespaces;
// the agent reaches its port through a Unix socket), as the frame's own uid and within the
// frame's memory, CPU and process limits when the agent is root. Builds: process-build.ts.
// Output goes to a file per replica, so a replica can outlive its agent and be adopted.
import type { ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AgentLog } from '../log.ts';
import type { AllowRule } from '../egress-policy.ts';
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
import { cgroupSupport, disposeCgroup, findCgroup, type Cgroup, type Limits } from './cgroups.ts';
import { createConfinement } from './confine.ts';
import { baseEnv, buildRelease, recordedRelease, recordOf } from './process-build.ts';
import { sandboxSupport } from './sandbox.ts';
import { processUsage } from '../metrics/process-usage.ts';
import type { Endpoint, ExitInfo, ReplicaRef, ReplicaRuntime, RunningReplica } from './runtime.ts';

export interface ProcessOptions {
  framesDir: string;
  volumesDir: string;
  /** Hidden from apps: the agent's data directory and whatever else the operator names. */
  hide: string[];
  /** Run apps in the sandbox (default: where the machine allows it). */
  sandbox: boolean;
  /** Each replica's limits (as root, where cgroups can be made); the docker runtime's defaults. */
  limits?: Partial<Limits>;
  /** Addresses builds may reach besides the public internet (BUILD_EGRESS_ALLOW). */
  egressAllow?: AllowRule[];
  log?: AgentLog;
}

export const DEFAULT_LIMITS: Limits = { memoryMb: 512, cpus: 1, pids: 512 };
const BUILD_MEMORY_MB = 2048;

export { baseEnv };

export function createProcessRuntime(o: ProcessOptions): ReplicaRuntime {
  const limits = { ...DEFAULT_LIMITS, ...o.limits };
  const confine = createConfinement({
    stateDir: dirname(o.framesDir),
    hide: [...new Set([...o.hide, homedir()])].filter((d) => d && d !== '/'),
    sandbox: o.sandbox,
    limits,
    buildMemoryMb: Math.max(BUILD_MEMORY_MB, limits.memoryMb),
    egressAllow: o.egressAllow ?? [],
    log: o.log,
  });
  const socketsDir = join(dirname(o.framesDir), 'sockets');
  const groups = cgroupSupport();

  function watch(
    pid: number,
    startTime: string | undefined,
    endpoint: Endpoint,
    logFile: string,
    offset: number,
    onLine: (l: string) => void,
    cgroup: { name: string; group: Cgroup } | undefined,
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
      const oom = cgroup?.group.oomKilled() ?? false;
      disposeCgroup(cgroup?.group);
      resolveExit({ code, signal, oom });
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
        ...(cgroup ? { cgroup: cgroup.name } : {}),
      }),
      usage: async () =>
        over || pid <= 0 || !isAlive(pid, startTime)
          ? undefined
          : processUsage(pid, cgroup?.group.dirs),
    };
  }

  return {
    kind: 'process',

    build: (r) => buildRelease(r, o.framesDir, confine),

    reuse: async (_frameId, release) =>
      recordedRelease(release.deploymentId, release.artifact) !== undefined,

    async start(spec, onLine) {
      const dir = spec.release.artifact;
      const name = createHash('sha256')
        .update(`${spec.frameId}/${spec.deploymentId}/${spec.index}/${Date.now()}/${Math.random()}`)
        .digest('hex')
        .slice(0, 16);
      const logFile = join(
        o.framesDir,
        spec.frameId,
        'logs',
        `${spec.deploymentId}.${spec.index}.log`,
      );
      mkdirSync(dirname(logFile), { recursive: true, mode: 0o700 });
      const env: NodeJS.ProcessEnv = {
        ...baseEnv(),
        HOME: dir,
        ...spec.env,
        FRAMEPLANE_FRAME_ID: spec.frameId,
        FRAMEPLANE_DEPLOYMENT_ID: spec.deploymentId,
        FRAMEPLANE_REPLICA: String(spec.index),
      };
      // A checkout built before per-frame uids (or under another uid) becomes the frame's.
      confine.own(dir, spec.frameId);
      const writable = [dir];
      for (const v of spec.volumes) {
        // No mounts here: each volume is a directory kept across deployments, named by a variable.
        const vd = join(o.volumesDir, v.id);
        confine.own(vd, spec.frameId);
        writable.push(vd);
        env[`FRAMEPLANE_VOLUME_${v.name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`] = vd;
      }
      let endpoint: Endpoint;
      let expose: { socketPath: string; port: number } | undefined;
      if (confine.sandboxed) {
        // Socket paths are short (108 bytes at most): one directory, a digest per replica. The
        // sandbox binds the socket before it builds the app's view, so the directory stays the
        // agent's, out of the app's sight: an app that could swap the socket for a link would
        // have the agent connect its frame's traffic to any socket of the host.
        const sockDir = join(socketsDir, name);
        mkdirSync(sockDir, { recursive: true, mode: 0o700 });
        expose = { socketPath: join(sockDir, 's'), port: spec.port };
        endpoint = { path: expose.socketPath };
        env.PORT = String(spec.port);
      } else {
        const port = await freePort();
        endpoint = { host: '127.0.0.1', port };
        env.PORT = String(port);
      }
      // The file may hold an earlier run of this slot, already sent: read only what comes now.
      const fd = openSync(logFile, 'a', 0o600);
      const from = fstatSync(fd).size;
      let spawned: ReturnType<typeof confine.spawn>;
      try {
        spawned = confine.spawn({
          frameId: spec.frameId,
          cwd: dir,
          command: spec.release.command ?? 'npm start',
          env,
          writable,
          stdio: fd,
          ...(expose ? { expose } : {}),
          cgroupName: `replica-${name}`,
        });
      } finally {
        closeSync(fd);
      }
      const { child, cgroup } = spawned;
      child.unref();
      const pid = child.pid ?? -1;
      return watch(
        pid,
        pid > 0 ? startTimeOf(pid) : undefined,
        endpoint,
        logFile,
        from,
        onLine,
        cgroup ? { name: `replica-${name}`, group: cgroup } : undefined,
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
      const group = ref.cgroup && groups.ok ? findCgroup(ref.cgroup, groups.version) : undefined;
      return watch(
        pid,
        ref.startTime,
        ref.endpoint,
        logFile,
        Number(ref.cursor.slice(cut + 1)) || 0,
        onLine,
        group && ref.cgroup ? { name: ref.cgroup, group } : undefined,
      );
    },

    async prune(frameId, keep) {
      const root = join(o.framesDir, frameId);
      if (!existsSync(root)) return;
      const kept = new Set(keep.flatMap((r) => [r.artifact, recordOf(r.artifact)]));
      for (const name of readdirSync(root)) {
        const p = join(root, name);
        if (name === 'logs' || name === 'npm-cache' || kept.has(p)) continue;
        if (name.includes(`.tmp-${process.pid}-`)) continue; // a fetch of ours in progress
        rmSync(p, { recursive: true, force: true });
      }
    },

    async forget(frameId) {
      rmSync(join(o.framesDir, frameId), { recursive: true, force: true });
      confine.release(frameId);
    },
  };
}

export const processSandboxSupport = sandboxSupport;
