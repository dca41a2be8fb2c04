// What the runtimes that hand a whole frame to an orchestrator (swarm/frame.ts, kubernetes/frame.ts)
// share: the frame's releases. One image per deployment (image-release.ts) becomes the release
// sent; while an earlier release serves, the new one is on trial until it takes over, and the
// earlier one is put back if it fails (CONTRACT 5). Changes run one at a time, in order. The
// subclass says how a release is sent, stopped, watched and put back.
import type { DesiredFrame, ReplicaEventType } from '../protocol.ts';
import type { PersistedFrame, ImageRelease } from '../state.ts';
import {
  nowIso,
  replicaEvent,
  routeOf,
  type FrameRunning,
  type FrameSupervisor,
  type SupervisorDeps,
} from '../supervisor.ts';
import { type ImageOptions, imageRelease, reportImageError } from './image-release.ts';
import type { Endpoint } from './runtime.ts';

export abstract class ImageFrame implements FrameSupervisor {
  protected spec?: DesiredFrame;
  /** The image that runs (or will, once sent) and the env it runs with. */
  protected release?: ImageRelease;
  /** The release that served when `release` was sent, until `release` takes over. */
  protected previous?: ImageRelease;
  protected building?: { deploymentId: string; abort: AbortController };
  /** Deployments that failed here (their build, or a new release while another served). */
  protected failed = new Set<string>();
  /** The key of what was last reported per replica. */
  protected reported = new Map<number, string>();
  /** Restarts seen per replica (metrics). */
  protected restarts = new Map<number, number>();
  protected upstreams: Endpoint[] = [];
  protected gone = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly frameId: string,
    protected deps: SupervisorDeps,
    private image: ImageOptions,
    /** Its name, in the agent's state file and its log. */
    private kind: 'swarm' | 'kubernetes',
  ) {}

  /** Sends `release` for `spec` to the orchestrator. */
  protected abstract send(spec: DesiredFrame): Promise<void>;
  /** Takes the frame's replicas down to none (a stop). */
  protected abstract scaleToZero(spec: DesiredFrame): Promise<void>;
  /** Looks at what runs, from now on (after each running spec is sent). */
  protected abstract watch(): void;
  /** The release on trial failed: `previous` goes back in (its caller said why). */
  protected abstract putBack(deploymentId: string): void;
  abstract running(): FrameRunning;
  abstract remove(): Promise<void>;
  abstract shutdown(): Promise<void>;

  /** Before a spec is applied (the spec is set): what the subclass must hold by then. */
  protected applying(): void {}

  /** Stops watching; the frame's objects stay. */
  protected quit() {
    this.gone = true;
  }

  update(spec: DesiredFrame) {
    return this.enqueue(() => this.apply(spec));
  }

  detach() {
    this.quit();
    this.building?.abort.abort();
    return this.persisted();
  }

  persisted(): PersistedFrame | undefined {
    if (!this.spec) return undefined;
    return {
      spec: this.spec,
      sets: [],
      failed_deployments: [...this.failed],
      [this.kind]: this.release && { ...this.release, previous: this.previous },
    };
  }

  adopt(p: PersistedFrame) {
    for (const id of [...(p.failed_deployments ?? []), ...(p.failed_builds ?? [])])
      this.failed.add(id);
    const saved = p[this.kind];
    if (saved) {
      const { previous, ...release } = saved;
      this.release = release;
      this.previous = previous;
    }
    return this.update(p.spec);
  }

  protected enqueue(fn: () => Promise<void>) {
    this.queue = this.queue
      .then(fn)
      .catch((err) =>
        this.deps.log.error({ err, frame_id: this.frameId }, `${this.kind} supervisor failed`),
      );
    return this.queue;
  }

  private async apply(spec: DesiredFrame) {
    if (this.gone) return;
    const before = this.spec;
    this.spec = spec;
    // Said again under the new generation.
    if (before && before.generation !== spec.generation) this.reported.clear();
    this.applying();
    if (spec.desired_state === 'stopped') {
      this.building?.abort.abort();
      this.building = undefined;
      this.upstreams = [];
      this.publish(); // the edge answers 503 before the replicas go
      await this.scaleToZero(spec);
      this.reportStopped();
      this.deps.changed();
      return;
    }
    this.publish();
    const failed = spec.build_failed || this.failed.has(spec.deployment_id);
    const have = this.release?.release.deploymentId === spec.deployment_id;
    if (!have && !failed && this.building?.deploymentId !== spec.deployment_id) this.build(spec);
    if (this.release) await this.send(spec);
    this.watch();
    this.deps.changed();
  }

  private build(spec: DesiredFrame) {
    this.building?.abort.abort();
    const job = { deploymentId: spec.deployment_id, abort: new AbortController() };
    this.building = job;
    for (let i = 0; i < spec.replica_count; i++) this.report(i, 'pulling', spec.deployment_id);
    imageRelease(this.image, this.frameId, spec, this.deps, job.abort.signal).then(
      (release) =>
        this.enqueue(async () => {
          if (this.building !== job) return;
          this.building = undefined;
          // What serves now goes back in if the new release fails. During another trial,
          // what served before that one still does.
          if (!this.previous && this.upstreams.length > 0) this.previous = this.release;
          this.release = { release, env: spec.env };
          this.deps.build({
            deployment_id: job.deploymentId,
            state: 'succeeded',
            commit_sha: release.commitSha,
            image: release.image,
            at: nowIso(),
          });
          const now = this.spec;
          if (now?.desired_state === 'running') await this.send(now);
          this.deps.changed();
        }),
      (err: Error) =>
        this.enqueue(async () => {
          if (this.building !== job || job.abort.signal.aborted) return;
          this.building = undefined;
          this.buildFailed(job.deploymentId, err);
        }),
    );
  }

  private buildFailed(deploymentId: string, err: Error) {
    const replicas = this.spec?.replica_count ?? 0;
    const crashed = (i: number, id: string, detail: Record<string, unknown>) =>
      this.report(i, 'crashed', id, detail);
    if (!reportImageError(this.deps, this.frameId, deploymentId, err, replicas, crashed)) return;
    this.failed.add(deploymentId);
    this.reported.clear(); // what serves is said again under the current generation
    if (!this.release) this.reportStopped();
    this.deps.changed();
  }

  /** Tells the edge the frame's route as it is now (the table ignores a route it holds). */
  protected publish() {
    if (this.gone || !this.spec) return;
    this.deps.routes.set(routeOf(this.frameId, this.spec, this.upstreams));
  }

  protected report(
    replica: number,
    type: ReplicaEventType,
    deploymentId: string,
    detail?: Record<string, unknown>,
  ) {
    if (!this.spec) return;
    this.deps.event(
      replicaEvent({
        frameId: this.frameId,
        replica,
        type,
        generation: this.spec.generation,
        deploymentId,
        detail,
      }),
    );
  }

  protected reportStopped() {
    if (!this.spec) return;
    for (let i = 0; i < this.spec.replica_count; i++) {
      if (this.reported.get(i) === 'stopped') continue;
      this.reported.set(i, 'stopped');
      this.report(i, 'stopped', this.spec.deployment_id);
    }
  }

  /** A replica of this deployment is on trial: sent while an earlier release served. */
  protected onTrial(deploymentId: string | undefined) {
    return !!this.previous && deploymentId === this.release?.release.deploymentId;
  }

  /** The release on trial failed while an earlier one served: that one goes back in. */
  protected releaseFailed(deploymentId: string, what: string) {
    this.failed.add(deploymentId);
    this.deps.line(
      this.frameId,
      0,
      `[frameplane] deployment ${deploymentId} failed: ${what}; what served keeps serving`,
    );
    this.putBack(deploymentId);
  }
}
