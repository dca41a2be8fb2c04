// The supervisor of one frame: makes what runs match the desired state from the server, on a
// replica runtime (process or docker).
//
// A frame runs a *replica set* per deployment: its release (an image, or a directory and a
// command) and `replica_count` replicas. A new deployment_id builds a release and starts a
// second set beside the first; the frame's route at the edge switches to it once all its
// replicas are healthy, and the old set is stopped once the requests in flight on it are done
// (drained). A build that fails is reported once (`build_failed`), never
// retried for that deployment, and the old set keeps serving. So does a new release whose
// replica crashes, runs out of memory or never passes its health check while the old set serves
// (CONTRACT 5: a new release takes over only once healthy): that one event is reported, the new
// set is stopped and never tried again. With nothing serving (a first deploy), crashed replicas
// restart with delays and the server's back-off counts them. Scaling adds or stops replicas of
// the current set; stop stops everything. Every change of what serves is told to the edge's
// routing table (publish): the serving set's healthy replicas, in order, or why none serves.
//
// Every event carries the generation of the desired state its set acts on and the deployment
// its replica runs, so reports of a set being replaced never count toward the one replacing it.
// Changes are applied one at a time (a queue); crash restarts run on their own timers, and
// check that their set still lives.
import type { DesiredFrame, ReplicaEventType } from './protocol.ts';
import {
  RELEASES_KEPT,
  replicaEvent,
  routeOf,
  type FrameRunning,
  type FrameSupervisor,
  type SupervisorDeps,
} from './supervisor.ts';
import type { PersistedFrame } from './state.ts';
import {
  Replica,
  restartDelayMs,
  STABLE_AFTER_MS,
  type ExitReport,
  type ReplicaHooks,
} from './replica.ts';
import { ReplicaSet, type Slot } from './replica-set.ts';
import { sleep } from './processes.ts';
import {
  BuildError,
  type Endpoint,
  type Release,
  type ReplicaRuntime,
} from './runtimes/runtime.ts';

export interface RunnerDeps extends SupervisorDeps {
  runtime: ReplicaRuntime;
}

const keyOf = (s: DesiredFrame) =>
  `${s.generation}/${s.desired_state}/${s.deployment_id}/${s.replica_count}/${s.port}/${s.health_check_path}/${s.build_failed}`;

export class FrameRunner implements FrameSupervisor {
  private spec?: DesiredFrame;
  /** The desired state, which every path past the first update() has. */
  private get desired(): DesiredFrame {
    if (!this.spec) throw new Error(`frame ${this.frameId}: no desired state yet`);
    return this.spec;
  }
  private applied?: string;
  private current?: ReplicaSet;
  private next?: ReplicaSet;
  /** Deployments that failed here (their build, or a new release on trial): never tried again. */
  private failed = new Set<string>();
  /** Builds of the releases that served here, newest first: a rollback runs one again. */
  private kept: Release[] = [];
  private queue: Promise<void> = Promise.resolve();
  private gone = false;
  /** Restarts after a crash made so far, per replica index (metrics). */
  private restarts = new Map<number, number>();

  constructor(
    readonly frameId: string,
    private deps: RunnerDeps,
  ) {}

  /** Applies a desired state from the server (a no-op when nothing changed). */
  update(spec: DesiredFrame): Promise<void> {
    return this.enqueue(async () => {
      if (this.gone || this.applied === keyOf(spec)) {
        this.spec = spec;
        this.publish(); // its hostname, domains or billing may have changed all the same
        return;
      }
      await this.apply(spec);
    });
  }

  /** The frame is no longer on this agent (deleted or moved): stop it and forget it. */
  remove(): Promise<void> {
    return this.enqueue(async () => {
      this.gone = true;
      this.deps.routes.remove(this.frameId);
      await this.stopAll(false);
      await this.deps.runtime.forget(this.frameId);
    });
  }

  /** The agent exits: leave the replicas running for the next agent to adopt. */
  detach(): PersistedFrame | undefined {
    this.gone = true;
    const state = this.persisted();
    for (const set of [this.current, this.next]) {
      if (!set) continue;
      set.retired = true;
      set.abort.abort();
      for (const s of set.slots.values()) {
        clearTimeout(s.timer);
        s.replica?.detach();
      }
    }
    return state;
  }

  /** Stops everything (the agent exits with --stop-frames-on-exit), reporting it. */
  shutdown(): Promise<void> {
    return this.enqueue(async () => {
      this.gone = true;
      await this.stopAll(true);
    });
  }

  persisted(): PersistedFrame | undefined {
    if (!this.spec) return undefined;
    const sets = [this.current, this.next].flatMap((s) => s?.persisted() ?? []);
    return {
      spec: this.spec,
      sets,
      failed_deployments: [...this.failed],
      kept_releases: this.kept,
    };
  }

  /** The replicas running now, of the serving set and of one on its way in. */
  running(): FrameRunning {
    const instances = [this.current, this.next].flatMap((set) =>
      [...(set?.slots.values() ?? [])].flatMap((s) => {
        const r = s.replica;
        return r && !r.exited ? [{ index: s.index, id: r.ref().id, usage: () => r.usage() }] : [];
      }),
    );
    return { instances, restarts: this.restarts };
  }

  /** Takes over what an earlier agent left running; what is gone is started afresh. */
  adopt(p: PersistedFrame): Promise<void> {
    return this.enqueue(async () => {
      for (const id of [...(p.failed_deployments ?? []), ...(p.failed_builds ?? [])])
        this.failed.add(id);
      this.kept = p.kept_releases ?? [];
      for (const ps of p.sets) {
        const set = new ReplicaSet(ps.deployment_id, ps.generation, 0, p.spec.env);
        if (ps.release && (await this.deps.runtime.reuse(this.frameId, ps.release)))
          set.release = ps.release;
        for (const r of ps.replicas) {
          set.count = Math.max(set.count, r.index + 1);
          const slot = set.slot(r.index);
          const found = (onLine: (l: string) => void) => this.deps.runtime.adopt(r.ref, onLine);
          const replica = await Replica.adoptWith(
            found,
            r.index,
            this.hooks(set, slot),
            this.health(p.spec),
          );
          if (replica && set.prepared) slot.replica = replica;
          else if (replica) await replica.stop();
        }
        if (ps.deployment_id === p.spec.deployment_id) this.next = set;
        else this.current = set;
      }
      if (!this.current && this.next) [this.current, this.next] = [this.next, undefined];
      const adopted = [this.current, this.next].reduce(
        (n, s) => n + [...(s?.slots.values() ?? [])].filter((x) => x.replica).length,
        0,
      );
      this.deps.log.info(
        { frame_id: this.frameId, adopted },
        'adopted replicas of an earlier agent',
      );
      await this.apply(p.spec);
    });
  }

  private enqueue(fn: () => Promise<void>): Promise<void> {
    this.queue = this.queue
      .then(fn)
      .catch((err) =>
        this.deps.log.error({ err, frame_id: this.frameId }, 'frame supervisor failed'),
      );
    return this.queue;
  }

  private health(spec: DesiredFrame) {
    return { path: spec.health_check_path || '/', startTimeoutMs: this.deps.startTimeoutMs };
  }

  private async apply(spec: DesiredFrame) {
    const before = this.spec;
    this.spec = spec;
    this.applied = keyOf(spec);
    if (spec.desired_state === 'stopped') return this.stopAll(true);
    this.publish();
    let target = [this.current, this.next].find((s) => s?.deploymentId === spec.deployment_id);
    const failed = spec.build_failed || this.failed.has(spec.deployment_id);
    if (!target && failed) {
      // It failed: the serving set, if any, goes on under the new generation.
      if (this.next) {
        await this.retire(this.next);
        this.next = undefined;
      }
      if (this.current) {
        this.current.generation = spec.generation;
        await this.scale(this.current, spec.replica_count);
      }
      if (before?.generation !== spec.generation) this.reportServing(spec);
      this.publish();
      this.deps.changed();
      return;
    }
    if (!target) {
      if (this.next) await this.retire(this.next); // a newer deployment overtakes one in progress
      target = this.next = new ReplicaSet(
        spec.deployment_id,
        spec.generation,
        spec.replica_count,
        spec.env,
      );
      const held = await this.held(spec.release_of);
      if (held) this.reuse(target, held);
      else void this.prepare(target);
    } else if (target === this.current && this.next) {
      await this.retire(this.next);
      this.next = undefined;
    }
    target.generation = spec.generation;
    await this.scale(target, spec.replica_count);
    await this.promoteIfReady();
    this.publish();
    this.deps.changed();
  }

  /** The serving set's healthy replicas; during a first rollout, the new set's. */
  private upstreams(): Endpoint[] {
    const live = (s?: ReplicaSet) => (s && !s.retired ? s.healthy() : []);
    const current = live(this.current);
    return current.length > 0 ? current : live(this.next);
  }

  /** Tells the edge the frame's route as it is now (the table ignores a route it holds). */
  private publish() {
    if (this.gone || !this.spec) return;
    this.deps.routes.set(routeOf(this.frameId, this.spec, this.upstreams()));
  }

  /** Takes replicas out of the route and waits for the requests in flight on them to end. */
  private async drain(slots: Slot[]) {
    this.publish();
    await this.deps.routes.drain(slots.flatMap((s) => (s.replica ? [s.replica.endpoint] : [])));
  }

  /** A new release while the current set serves: it must be healthy to take over, or it fails. */
  private onTrial(set: ReplicaSet) {
    return set === this.next && (this.current?.healthy().length ?? 0) > 0;
  }

  private report(
    set: ReplicaSet,
    replica: number,
    type: ReplicaEventType,
    detail?: Record<string, unknown>,
  ) {
    this.deps.event(
      replicaEvent({
        frameId: this.frameId,
        replica,
        type,
        generation: set.generation,
        deploymentId: set.deploymentId,
        detail,
      }),
    );
  }

  /** Says again how the serving set's replicas are, under the current generation (after a
   *  failed build). */
  private reportServing(spec: DesiredFrame) {
    const set = this.current ?? this.next;
    for (let i = 0; i < spec.replica_count; i++) {
      const r = set?.slots.get(i)?.replica;
      if (!set) {
        this.deps.event({
          frame_id: this.frameId,
          replica: i,
          type: 'stopped',
          generation: spec.generation,
          at: new Date().toISOString(),
        });
      } else if (r && !r.exited) {
        this.report(
          set,
          i,
          r.state === 'healthy' ? 'healthy' : r.state === 'unhealthy' ? 'unhealthy' : 'starting',
        );
      }
    }
  }

  /** Fetches and builds the set's release. A fetch failure is retried with delays; a failed build is final. */
  private async prepare(set: ReplicaSet) {
    for (let attempt = 0; !set.retired; attempt++) {
      for (let i = 0; i < set.count; i++) this.report(set, i, 'pulling');
      const s = this.desired;
      const what = `${s.git_repository_owner}/${s.git_repository} at ${s.commit_sha ?? s.git_repository_branch}`;
      this.buildLine(`[frameplane] deployment ${set.deploymentId}: ${what}`);
      try {
        const release = await this.deps.runtime.build({
          frameId: this.frameId,
          deploymentId: set.deploymentId,
          signal: set.abort.signal,
          source: {
            gitBaseUrl: this.deps.gitBaseUrl,
            owner: s.git_repository_owner,
            repo: s.git_repository,
            branch: s.git_repository_branch,
            commitSha: s.commit_sha,
          },
          onLine: (l) => this.buildLine(l),
          // Pulling is the fetch; a long build must not look like a stuck pull (the server trips those).
          onFetched: (sha) => {
            if (set.retired) return;
            this.deps.build({
              deployment_id: set.deploymentId,
              state: 'building',
              commit_sha: sha,
              at: new Date().toISOString(),
            });
            for (let i = 0; i < set.count; i++) this.report(set, i, 'starting');
          },
        });
        if (set.retired) return;
        set.release = release;
        this.deps.build({
          deployment_id: set.deploymentId,
          state: 'succeeded',
          commit_sha: release.commitSha,
          image: release.image,
          at: new Date().toISOString(),
        });
        this.buildLine(
          `[frameplane] starting ${set.count} replica(s) of ${release.commitSha.slice(0, 12)}`,
        );
        await this.enqueue(async () => {
          if (!set.retired) {
            await this.fill(set);
            this.deps.changed();
          }
        });
        return;
      } catch (err) {
        if (set.retired) return;
        const message = (err as Error).message.slice(0, 2000);
        if (err instanceof BuildError && err.reason === 'build_failed')
          return this.buildFailed(set, message);
        // A clone that failed says so (clone_failed, with git's line); else the fetch failed.
        const reason = err instanceof BuildError ? err.reason : 'image_pull_failed';
        this.buildLine(`[frameplane] fetch failed: ${message}`);
        for (let i = 0; i < set.count; i++) this.report(set, i, 'crashed', { reason, message });
        await sleep(restartDelayMs(attempt), set.abort.signal);
      }
    }
  }

  /** A line of the fetch and build, which the frame's logs file under source `build`. */
  private buildLine(line: string) {
    this.deps.line(this.frameId, 0, line, 'build');
  }

  private buildFailed(set: ReplicaSet, message: string) {
    this.buildLine(`[frameplane] build failed: ${message}`);
    this.deps.build({
      deployment_id: set.deploymentId,
      state: 'failed',
      message,
      at: new Date().toISOString(),
    });
    return this.fail(set);
  }

  /** A new release failed on trial (its one event is reported): the serving set goes on. */
  private releaseFailed(set: ReplicaSet, what: string) {
    this.deps.line(
      this.frameId,
      0,
      `[frameplane] deployment ${set.deploymentId} failed: ${what}; what served keeps serving`,
    );
    void this.fail(set);
  }

  /**
   * Retires a set whose deployment failed, at once (nothing of it restarts or reports from now
   * on), and remembers the deployment, so that neither this agent nor one that adopts its
   * frames tries it again; what serves goes on under the current generation.
   */
  private fail(set: ReplicaSet) {
    this.failed.add(set.deploymentId);
    set.retired = true;
    return this.enqueue(async () => {
      if (this.next !== set && this.current !== set) return; // a newer deployment replaced it
      if (this.next === set) this.next = undefined;
      if (this.current === set) this.current = undefined;
      await this.retire(set);
      const spec = this.desired;
      if (this.current) this.current.generation = spec.generation;
      this.reportServing(spec);
      this.deps.changed();
    });
  }

  private async scale(set: ReplicaSet, count: number) {
    if (!set.prepared) for (let i = set.count; i < count; i++) this.report(set, i, 'pulling');
    set.count = count;
    const extra = [...set.slots.values()].filter((s) => s.index >= count);
    for (const s of extra) {
      clearTimeout(s.timer);
      set.slots.delete(s.index);
    }
    if (extra.length > 0) await this.drain(extra);
    await Promise.all(
      extra.map(async (s) => {
        await s.replica?.stop();
        this.report(set, s.index, 'stopped');
      }),
    );
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
    if (set.retired || slot.index >= set.count || !set.release || !this.spec) return;
    slot.spawning = true;
    try {
      slot.replica = await Replica.start(
        this.deps.runtime,
        {
          frameId: this.frameId,
          deploymentId: set.deploymentId,
          index: slot.index,
          release: set.release,
          env: set.env,
          volumes: this.spec.volumes,
          port: this.spec.port,
        },
        this.hooks(set, slot),
        this.health(this.spec),
      );
      if (set.retired || slot.index >= set.count) {
        await slot.replica.stop();
        slot.replica = undefined;
      }
      this.deps.changed();
    } catch (err) {
      // The runtime could not start it (an image gone, the Engine down): a crash, retried with delays.
      this.deps.line(
        this.frameId,
        slot.index,
        `[frameplane] could not start replica ${slot.index}: ${(err as Error).message}`,
      );
      this.onExit(set, slot, { code: null, signal: null, oom: false, ranHealthyMs: 0 });
    } finally {
      slot.spawning = false;
    }
  }

  private hooks(set: ReplicaSet, slot: Slot): ReplicaHooks {
    return {
      report: (type, detail) => {
        if (set.retired) return; // replaced or failed: what it says no longer matters
        if (type === 'healthy') slot.failed = undefined;
        // A restart after a crash says so: the frame is Degraded while it comes up, not Online.
        const restart = type === 'starting' && slot.failed ? { reason: slot.failed } : undefined;
        this.report(set, slot.index, type, restart ?? detail);
        this.publish();
        if (type === 'healthy' && set === this.next) void this.enqueue(() => this.promoteIfReady());
        if (type === 'unhealthy' && detail?.reason === 'start_timeout' && this.onTrial(set))
          this.releaseFailed(set, `replica ${slot.index} never passed its health check`);
      },
      line: (line) => this.deps.line(this.frameId, slot.index, line),
      exited: (info) => this.onExit(set, slot, info),
    };
  }

  private onExit(set: ReplicaSet, slot: Slot, info: ExitReport) {
    slot.replica = undefined;
    this.publish();
    this.deps.changed();
    if (set.retired || this.gone) return;
    const how = info.signal
      ? `signal ${info.signal}`
      : info.code === null
        ? 'unknown status'
        : `exit code ${info.code}`;
    const why = `${how}${info.oom ? ', out of memory' : ''}`;
    slot.failed = info.oom ? 'oom' : 'crash';
    this.report(set, slot.index, info.oom ? 'oom' : 'crashed', {
      exit_code: info.code,
      signal: info.signal,
      message: `replica ${slot.index} exited (${why})`,
    });
    // While another release serves, a new one that crashes does not take over: no restarts
    // (whose crashes the server's back-off would count, stopping the serving release too).
    if (this.onTrial(set)) return this.releaseFailed(set, `replica ${slot.index} exited (${why})`);
    if (info.ranHealthyMs >= STABLE_AFTER_MS) slot.attempts = 0;
    const delay = restartDelayMs(slot.attempts++);
    this.deps.line(
      this.frameId,
      slot.index,
      `[frameplane] replica ${slot.index} exited (${why}); restarting in ${delay / 1000} s`,
    );
    slot.timer = setTimeout(() => {
      slot.timer = undefined;
      if (
        !set.retired &&
        !this.gone &&
        slot.index < set.count &&
        set.slots.get(slot.index) === slot
      ) {
        this.restarts.set(slot.index, (this.restarts.get(slot.index) ?? 0) + 1);
        void this.start(set, slot);
      }
    }, delay);
    slot.timer.unref();
  }

  /** A build this agent still holds, of the deployment named (a rollback, a restart). */
  private async held(deploymentId: string | null | undefined): Promise<Release | undefined> {
    if (!deploymentId) return undefined;
    const sets = [this.current, this.next].flatMap((s) => s?.release ?? []);
    const found = [...sets, ...this.kept].find((r) => r.deploymentId === deploymentId);
    return found && (await this.deps.runtime.reuse(this.frameId, found)) ? found : undefined;
  }

  /** Runs an earlier build for a new deployment: nothing fetched, nothing built. */
  private reuse(set: ReplicaSet, release: Release) {
    set.release = release;
    this.deps.line(
      this.frameId,
      0,
      `[frameplane] deployment ${set.deploymentId}: the build of ${release.deploymentId} ` +
        `(${release.commitSha.slice(0, 12)}) again, nothing to build`,
    );
    this.deps.build({
      deployment_id: set.deploymentId,
      state: 'succeeded',
      commit_sha: release.commitSha,
      image: release.image,
      at: new Date().toISOString(),
    });
  }

  /** Switches to the new set once all its replicas are healthy, then stops the old one. */
  private async promoteIfReady() {
    const n = this.next;
    if (!n?.release || n.retired || n.healthy().length < n.count) return;
    const old = this.current;
    this.current = n;
    this.next = undefined;
    if (old) await this.retire(old);
    const releasesKept = this.deps.releasesKept ?? RELEASES_KEPT;
    const others = this.kept.filter((r) => r.artifact !== n.release?.artifact);
    this.kept = [n.release, ...others].slice(0, releasesKept);
    await this.deps.runtime
      .prune(this.frameId, this.kept)
      .catch((err) => this.deps.log.warn({ err, frame_id: this.frameId }, 'prune failed'));
    this.deps.changed();
  }

  /**
   * Stops a set's replicas without reporting them: its slots now belong to another set. Out of
   * the route first, they finish the requests they have in flight (for the drain timeout at most).
   */
  private async retire(set: ReplicaSet) {
    set.retired = true;
    set.abort.abort();
    await this.drain([...set.slots.values()]);
    await Promise.all(
      [...set.slots.values()].map(async (s) => {
        clearTimeout(s.timer);
        s.timer = undefined;
        await s.replica?.stop();
      }),
    );
  }

  private async stopAll(report: boolean) {
    const sets = [this.current, this.next].filter((s): s is ReplicaSet => !!s);
    this.current = this.next = undefined;
    this.publish();
    const indices = new Set<number>();
    for (let i = 0; i < (this.spec?.replica_count ?? 0); i++) indices.add(i);
    for (const set of sets) for (const i of set.slots.keys()) indices.add(i);
    await Promise.all(sets.map((s) => this.retire(s)));
    if (report && this.spec) {
      const generation = this.spec.generation;
      for (const i of [...indices].sort((a, b) => a - b)) {
        this.deps.event({
          frame_id: this.frameId,
          replica: i,
          type: 'stopped',
          generation,
          at: new Date().toISOString(),
        });
      }
    }
    this.deps.changed();
  }
}
