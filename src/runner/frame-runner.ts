// The supervisor of one frame: makes what runs match the desired state from the server.
//
// A frame runs a *replica set* per deployment: its checkout, its command, `replica_count`
// replicas. A new deployment_id starts a second set beside the first; the proxy switches to it
// once all its replicas are healthy and the old set is stopped then (a failing deploy leaves
// the old version serving until the server's back-off stops the frame). Scaling adds or stops
// replicas of the current set; a port change moves the proxy; stop stops everything.
//
// Every event carries the generation of the desired state its set acts on, so reports of a set
// being replaced never count toward the deployment replacing it. Changes are applied one at a
// time (a queue); crash restarts run on their own timers, and check that their set still lives.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AgentLog } from './log.ts';
import type { DesiredFrame, ReplicaEventType, SyncEvent } from './protocol.ts';
import type { PersistedFrame } from './state.ts';
import { FrameProxy } from './proxy.ts';
import { Replica, restartDelayMs, STABLE_AFTER_MS, type ExitInfo, type ReplicaHooks } from './replica.ts';
import { freePort, isAlive, portAnswers, signalGroup, sleep } from './processes.ts';
import { prepareSource, pruneDeployments, SourceError } from './source.ts';

export interface RunnerDeps {
  framesDir: string;
  volumesDir: string;
  host: string;
  gitBaseUrl: string;
  log: AgentLog;
  event(e: SyncEvent): void;
  line(frameId: string, replica: number, line: string): void;
  /** Something worth persisting changed (a replica started or went). */
  changed(): void;
}

interface Slot { index: number; replica?: Replica; attempts: number; timer?: NodeJS.Timeout; spawning?: boolean }

class ReplicaSet {
  slots = new Map<number, Slot>();
  dir?: string;
  command?: string;
  retired = false;
  readonly abort = new AbortController();
  constructor(readonly deploymentId: string, public generation: number, public count: number, readonly env: Record<string, string>) {}
  get prepared() { return this.dir !== undefined && this.command !== undefined; }
  slot(index: number): Slot {
    let s = this.slots.get(index);
    if (!s) this.slots.set(index, (s = { index, attempts: 0 }));
    return s;
  }
  healthyPorts(): number[] {
    return [...this.slots.values()].filter((s) => s.index < this.count && s.replica?.healthy)
      .sort((a, b) => a.index - b.index).map((s) => s.replica!.port);
  }
}

const keyOf = (s: DesiredFrame) => `${s.generation}/${s.desired_state}/${s.deployment_id}/${s.replica_count}/${s.port}`;

export class FrameRunner {
  private spec?: DesiredFrame;
  private applied?: string;
  private current?: ReplicaSet;
  private next?: ReplicaSet;
  private proxy?: FrameProxy;
  private queue: Promise<void> = Promise.resolve();
  private gone = false;

  constructor(readonly frameId: string, private deps: RunnerDeps) {}

  /** Applies a desired state from the server (a no-op when nothing changed). */
  update(spec: DesiredFrame): Promise<void> {
    return this.enqueue(async () => {
      if (this.gone || this.applied === keyOf(spec)) { this.spec = spec; return; }
      await this.apply(spec);
    });
  }

  /** The frame is no longer on this agent (deleted or moved): stop it and forget it. */
  remove(): Promise<void> {
    return this.enqueue(async () => {
      this.gone = true;
      await this.stopAll(false);
      rmSync(join(this.deps.framesDir, this.frameId), { recursive: true, force: true });
    });
  }

  /** The agent exits: leave the replicas running for the next agent to adopt. */
  detach(): PersistedFrame | undefined {
    this.gone = true;
    const state = this.persisted();
    void this.proxy?.close(false);
    for (const set of [this.current, this.next]) {
      if (!set) continue;
      set.retired = true;
      set.abort.abort();
      for (const s of set.slots.values()) { clearTimeout(s.timer); s.replica?.detach(); }
    }
    return state;
  }

  /** Stops everything (the agent exits with --stop-frames-on-exit), reporting it. */
  shutdown(): Promise<void> {
    return this.enqueue(async () => { this.gone = true; await this.stopAll(true); });
  }

  persisted(): PersistedFrame | undefined {
    if (!this.spec) return undefined;
    const sets = [this.current, this.next].filter((s): s is ReplicaSet => !!s?.prepared && !s.retired).map((s) => ({
      deployment_id: s.deploymentId, generation: s.generation, dir: s.dir!, command: s.command!,
      replicas: [...s.slots.values()].filter((sl) => sl.replica && !sl.replica.exited).map((sl) => sl.replica!.persisted()),
    }));
    return { spec: this.spec, sets };
  }

  /**
   * Takes over what an earlier agent left running. A replica is adopted only if its process
   * (pid and start time) lives and its port answers; one that lives but does not answer is
   * killed, and its slot starts afresh, so there is never a duplicate.
   */
  adopt(p: PersistedFrame): Promise<void> {
    return this.enqueue(async () => {
      for (const ps of p.sets) {
        const set = new ReplicaSet(ps.deployment_id, ps.generation, 0, p.spec.env);
        if (existsSync(ps.dir)) { set.dir = ps.dir; set.command = ps.command; }
        for (const r of ps.replicas) {
          set.count = Math.max(set.count, r.index + 1);
          if (set.prepared && isAlive(r.pid, r.start_time) && (await portAnswers(r.port))) {
            set.slot(r.index).replica = Replica.adopt(r, this.hooks(set, set.slot(r.index)));
          } else if (isAlive(r.pid, r.start_time)) {
            signalGroup(r.pid, 'SIGKILL');
          }
        }
        if (ps.deployment_id === p.spec.deployment_id) this.next = set; else this.current = set;
      }
      if (!this.current && this.next) [this.current, this.next] = [this.next, undefined];
      const adopted = [this.current, this.next].reduce((n, s) => n + (s?.slots.size ?? 0), 0);
      this.deps.log.info({ frame_id: this.frameId, adopted }, 'adopted replicas of an earlier agent');
      await this.apply(p.spec);
    });
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(fn).catch((err) => this.deps.log.error({ err, frame_id: this.frameId }, 'frame supervisor failed'));
    return this.queue;
  }

  private async apply(spec: DesiredFrame) {
    this.spec = spec;
    this.applied = keyOf(spec);
    if (spec.desired_state === 'stopped') return this.stopAll(true);
    await this.ensureProxy(spec.port);
    let target = [this.current, this.next].find((s) => s?.deploymentId === spec.deployment_id);
    if (!target) {
      if (this.next) await this.retire(this.next); // a newer deployment overtakes one in progress
      target = this.next = new ReplicaSet(spec.deployment_id, spec.generation, spec.replica_count, spec.env);
      void this.prepare(target);
    } else if (target === this.current && this.next) {
      await this.retire(this.next);
      this.next = undefined;
    }
    target.generation = spec.generation;
    await this.scale(target, spec.replica_count);
    await this.promoteIfReady();
    this.deps.changed();
  }

  private async ensureProxy(port: number) {
    if (this.proxy?.port === port) return;
    await this.proxy?.close(false); // connections in flight finish on the old port
    this.proxy = new FrameProxy({
      host: this.deps.host, port, upstreams: () => this.upstreams(), note: (m) => this.deps.line(this.frameId, 0, m),
    });
    await this.proxy.listen();
  }

  /** The serving set's healthy replicas; during a first rollout, the new set's. */
  private upstreams(): number[] {
    const current = this.current?.healthyPorts() ?? [];
    return current.length > 0 ? current : (this.next?.healthyPorts() ?? []);
  }

  private report(set: ReplicaSet, replica: number, type: ReplicaEventType, detail?: Record<string, unknown>) {
    this.deps.event({ frame_id: this.frameId, replica, type, generation: set.generation, at: new Date().toISOString(), ...(detail ? { detail } : {}) });
  }

  /** Fetches and builds the set's deployment; a failure is a crash of each replica, retried with delays. */
  private async prepare(set: ReplicaSet) {
    for (let attempt = 0; !set.retired; attempt++) {
      for (let i = 0; i < set.count; i++) this.report(set, i, 'pulling');
      const s = this.spec!;
      this.deps.line(this.frameId, 0, `[frameplane] deployment ${set.deploymentId}: ${s.git_repository_owner}/${s.git_repository} at ${s.commit_sha ?? s.git_repository_branch}`);
      try {
        const { dir, command } = await prepareSource({
          framesDir: this.deps.framesDir, frameId: this.frameId, deploymentId: set.deploymentId,
          gitEnv: cleanEnv(), buildEnv: this.replicaEnv(set),
          source: {
            gitBaseUrl: this.deps.gitBaseUrl, owner: this.spec!.git_repository_owner, repo: this.spec!.git_repository,
            branch: this.spec!.git_repository_branch, commitSha: this.spec!.commit_sha,
          },
          onLine: (l) => this.deps.line(this.frameId, 0, l), signal: set.abort.signal,
          // Pulling is the fetch; a long build must not look like a stuck pull (the server trips those).
          onBuild: () => { for (let i = 0; i < set.count; i++) this.report(set, i, 'starting'); },
        });
        if (set.retired) return;
        set.dir = dir;
        set.command = command;
        this.deps.line(this.frameId, 0, `[frameplane] starting ${set.count} × ${command}`);
        await this.enqueue(async () => { if (!set.retired) { await this.fill(set); this.deps.changed(); } });
        return;
      } catch (err) {
        if (set.retired) return;
        const reason = err instanceof SourceError ? err.reason : 'image_pull_failed';
        const message = (err as Error).message.slice(0, 2000);
        this.deps.line(this.frameId, 0, `[frameplane] ${reason === 'build_failed' ? 'build' : 'fetch'} failed: ${message}`);
        for (let i = 0; i < set.count; i++) this.report(set, i, 'crashed', { reason, message });
        await sleep(restartDelayMs(attempt), set.abort.signal);
      }
    }
  }

  private async scale(set: ReplicaSet, count: number) {
    if (!set.prepared) for (let i = set.count; i < count; i++) this.report(set, i, 'pulling');
    set.count = count;
    const extra = [...set.slots.values()].filter((s) => s.index >= count);
    await Promise.all(extra.map(async (s) => {
      clearTimeout(s.timer);
      set.slots.delete(s.index);
      await s.replica?.stop();
      this.report(set, s.index, 'stopped');
    }));
    if (set.prepared) await this.fill(set);
  }

  /** Starts a replica in every slot of the set that has none and no restart pending. */
  private async fill(set: ReplicaSet) {
    const starts: Promise<void>[] = [];
    for (let i = 0; i < set.count; i++) {
      const slot = set.slot(i);
      if (!slot.replica && !slot.timer && !slot.spawning) starts.push(this.start(set, slot));
    }
    await Promise.all(starts);
  }

  private async start(set: ReplicaSet, slot: Slot) {
    slot.spawning = true;
    try {
      const port = await freePort();
      if (set.retired || slot.index >= set.count || !set.prepared) return;
      const logFile = join(this.deps.framesDir, this.frameId, 'logs', `${set.deploymentId}.${slot.index}.log`);
      mkdirSync(dirname(logFile), { recursive: true });
      slot.replica = Replica.spawn({
        index: slot.index, port, cwd: set.dir!, command: set.command!, env: { ...this.replicaEnv(set), PORT: String(port), FRAMEPLANE_REPLICA: String(slot.index) },
        logFile, hooks: this.hooks(set, slot),
      });
      this.deps.changed();
    } finally {
      slot.spawning = false;
    }
  }

  private hooks(set: ReplicaSet, slot: Slot): ReplicaHooks {
    return {
      report: (type, detail) => {
        this.report(set, slot.index, type, detail);
        if (type === 'healthy' && set === this.next) void this.enqueue(() => this.promoteIfReady());
      },
      line: (line) => this.deps.line(this.frameId, slot.index, line),
      exited: (info) => this.onExit(set, slot, info),
    };
  }

  private onExit(set: ReplicaSet, slot: Slot, info: ExitInfo) {
    slot.replica = undefined;
    this.deps.changed();
    if (set.retired || this.gone) return;
    this.report(set, slot.index, info.oom ? 'oom' : 'crashed', { exit_code: info.code, signal: info.signal });
    if (info.ranHealthyMs >= STABLE_AFTER_MS) slot.attempts = 0;
    const delay = restartDelayMs(slot.attempts++);
    const how = info.signal ? `signal ${info.signal}` : info.code === null ? 'unknown status' : `exit code ${info.code}`;
    this.deps.line(this.frameId, slot.index, `[frameplane] replica ${slot.index} exited (${how}${info.oom ? ', out of memory' : ''}); restarting in ${delay / 1000} s`);
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (!set.retired && !this.gone && slot.index < set.count && set.slots.get(slot.index) === slot) void this.start(set, slot);
    }, delay);
    slot.timer.unref();
  }

  /** Switches to the new set once all its replicas are healthy, then stops the old one. */
  private async promoteIfReady() {
    const n = this.next;
    if (!n || !n.prepared || n.retired || n.healthyPorts().length < n.count) return;
    const old = this.current;
    this.current = n;
    this.next = undefined;
    if (old) await this.retire(old);
    pruneDeployments(this.deps.framesDir, this.frameId, new Set([n.deploymentId]));
    this.deps.changed();
  }

  /** Stops a set's replicas without reporting them: its slots now belong to another set. */
  private async retire(set: ReplicaSet) {
    set.retired = true;
    set.abort.abort();
    await Promise.all([...set.slots.values()].map(async (s) => { clearTimeout(s.timer); s.timer = undefined; await s.replica?.stop(); }));
  }

  private async stopAll(report: boolean) {
    const sets = [this.current, this.next].filter((s): s is ReplicaSet => !!s);
    this.current = this.next = undefined;
    await this.proxy?.close();
    this.proxy = undefined;
    const indices = new Set<number>();
    for (let i = 0; i < (this.spec?.replica_count ?? 0); i++) indices.add(i);
    for (const set of sets) for (const i of set.slots.keys()) indices.add(i);
    await Promise.all(sets.map((s) => this.retire(s)));
    if (report && this.spec) {
      const generation = this.spec.generation;
      for (const i of [...indices].sort((a, b) => a - b)) {
        this.deps.event({ frame_id: this.frameId, replica: i, type: 'stopped', generation, at: new Date().toISOString() });
      }
    }
    this.deps.changed();
  }

  /** The environment of a build and of a replica: a clean one, then the frame's env and volumes. */
  private replicaEnv(set: ReplicaSet): NodeJS.ProcessEnv {
    const env = cleanEnv();
    Object.assign(env, { npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }, set.env);
    for (const v of this.spec?.volumes ?? []) {
      // No containers, so no mounts: each volume is a directory kept across deployments.
      const dir = join(this.deps.volumesDir, v.id);
      mkdirSync(dir, { recursive: true });
      env[`FRAMEPLANE_VOLUME_${v.name.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}`] = dir;
    }
    return { ...env, FRAMEPLANE_FRAME_ID: this.frameId, FRAMEPLANE_DEPLOYMENT_ID: set.deploymentId };
  }
}

/**
 * Not the agent's environment, which may hold the agent token or, for the built-in agent, what
 * the service was given: only what programs need to find their way.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const pass = ['HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'SHELL'];
  const env: NodeJS.ProcessEnv = Object.fromEntries(pass.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]));
  // The node that runs the agent is the node (and npm) the apps get, even if PATH lacks it.
  env.PATH = [dirname(process.execPath), process.env.PATH || '/usr/local/bin:/usr/bin:/bin'].join(':');
  return env;
}
