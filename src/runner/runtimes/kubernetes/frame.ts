// The `kubernetes` runtime (issue 40): a frame is a Deployment of `replica_count` pods
// (manifests.ts, pod.ts) in its project's namespace. Kubernetes schedules, restarts and rolls
// out (maxUnavailable 0: a new pod is Ready before an old one goes); this supervisor builds the
// image (image-release.ts), sends the frame's objects (apply.ts), and reads what happens from the
// cluster's watches (watch.ts): each pod's status and Events become the replica's events
// (pod-status.ts), under a stable slot (slots.ts); the Ready pods are the frame's route at the
// edge, by their pod addresses. The pods' output is streamed into the frame's log (pod-logs.ts).
//
// A new release takes over only once Ready (CONTRACT 5): while an earlier release serves, a pod
// of the new one that crashes, runs out of memory or is never Ready fails that deployment: its
// failure is reported once, the earlier release's pod template is put back (rollback.ts), and
// the deployment is never sent again. With nothing serving, the kubelet restarts crashed pods
// with its back-off, each crash is reported, and the server's back-off counts them. The
// releases' bookkeeping (build, trial, put back, reports) is image-frame.ts's, as swarm's.
import {
  frameHosts,
  type FrameRunning,
  type FrameSupervisor,
  type SupervisorDeps,
} from '../../supervisor.ts';
import type { DesiredFrame, ReplicaEventType } from '../../protocol.ts';
import { inspectImage, pruneImages } from '../../builder/image.ts';
import { wantsReadOnlyRoot } from '../../builder/dockerfile.ts';
import type { ImageOptions } from '../image-release.ts';
import { ImageFrame } from '../image-frame.ts';
import type { Cluster } from './cluster.ts';
import { applyFrame, removeFrame, rollBack, scaleFrame } from './apply.ts';
import type { V1Pod } from '@kubernetes/client-node';
import { LABELS, namespaceOf } from './names.ts';
import { observePod } from './pod-status.ts';
import { assignSlots } from './slots.ts';
import type { PodWatch } from './watch.ts';
import { podLogs } from './pod-logs.ts';
import { isReady, readyEndpoints } from './endpoints.ts';
import { type PodRef, type PodUsage, podRefOf } from './pod-usage.ts';
import type { IngressOptions } from './objects/ingress.ts';

export interface KubernetesOptions extends ImageOptions {
  cluster: Cluster;
  watch: PodWatch;
  memoryMb: number;
  cpus: number;
  /** One namespace for every frame (FRAME_NAMESPACE); else one per project, made here. */
  namespace?: string;
  /** The cluster's pod and service ranges (KUBERNETES_CLUSTER_CIDRS), out of pods' egress. */
  clusterCidrs: string[];
  /** Without a registry, images exist on the node that built them: pods run there. */
  node?: string;
  /** What pods use, for the metrics (pod-usage.ts). */
  usage: PodUsage;
  /** The operator's Ingress controller (KUBERNETES_INGRESS_CLASS), a second way in. */
  ingress?: IngressOptions;
  /** The class of the frames' volume claims (KUBERNETES_STORAGE_CLASS); else the default. */
  storageClass?: string;
}

/** How often a frame's pods are looked at again without news (a start's timeout runs out). */
const TICK_MS = 2000;
/** An update the cluster refused (the API server away) is sent again after this. */
const RETRY_MS = 5000;
const FAILURES = new Set<ReplicaEventType>(['crashed', 'oom', 'unhealthy']);

export const kubernetesSupervisor =
  (o: KubernetesOptions) =>
  (frameId: string, deps: SupervisorDeps): FrameSupervisor =>
    new KubeFrame(frameId, deps, o);

class KubeFrame extends ImageFrame {
  private slots = new Map<string, number>();
  /** The running pods of the last look, by replica: what the metrics read. */
  private live: Array<{ replica: number; pod: PodRef; restarts: number }> = [];
  private unsubscribe?: () => void;
  private timer?: NodeJS.Timeout;
  private woken = false;
  /** What the last applied Deployment said (its generation, size, release), logged once. */
  private lastSent = '';
  private readonly logs;

  constructor(
    frameId: string,
    deps: SupervisorDeps,
    private o: KubernetesOptions,
  ) {
    super(frameId, deps, o, 'kubernetes');
    this.logs = podLogs(o.cluster, (replica, line) => deps.line(frameId, replica, line));
  }

  private get namespace() {
    return namespaceOf({ namespace: this.o.namespace, projectId: this.spec?.project_id });
  }

  remove() {
    return this.enqueue(async () => {
      this.quit();
      this.deps.routes.remove(this.frameId);
      if (this.spec)
        await removeFrame(this.o.cluster, this.namespace, this.frameId, !this.o.namespace);
      await pruneImages(this.o.docker, this.frameId, new Set()).catch(() => {});
    });
  }

  shutdown() {
    return this.enqueue(async () => {
      this.quit();
      if (this.spec) await scaleFrame(this.o.cluster, this.namespace, this.frameId, 0);
      this.reportStopped();
    });
  }

  running(): FrameRunning {
    const on = this.spec?.desired_state === 'running' && !this.gone;
    const limit = this.o.memoryMb * 1024 * 1024;
    // A container's counters start again when it restarts: a new instance for the metrics.
    const instances = (on ? this.live : []).map(({ replica, pod, restarts }) => ({
      index: replica,
      id: `${pod.uid}/${restarts}`,
      usage: () => this.o.usage.usage(pod, limit),
    }));
    return { instances, restarts: this.restarts };
  }

  protected override quit() {
    super.quit();
    this.unsubscribe?.();
    this.logs.stop();
    clearTimeout(this.timer);
  }

  protected override applying() {
    this.unsubscribe ??= this.o.watch.subscribe(this.namespace, this.frameId, () => this.wake());
  }

  protected send(spec: DesiredFrame) {
    return this.sent(spec, () => this.deploy(spec));
  }

  protected scaleToZero(spec: DesiredFrame) {
    return this.sent(spec, () => scaleFrame(this.o.cluster, this.namespace, this.frameId, 0));
  }

  protected watch() {
    this.wake();
  }

  /** Runs a change of the cluster; if refused, logs why and tries again unless the spec moved on. */
  private async sent(spec: DesiredFrame, change: () => Promise<unknown>) {
    try {
      await change();
    } catch (err) {
      this.deps.log.warn({ err, frame_id: this.frameId }, 'the cluster refused a change');
      this.deps.line(
        this.frameId,
        0,
        `[frameplane] the cluster refused: ${(err as Error).message}`,
      );
      setTimeout(() => {
        if (this.spec === spec) void this.update(spec);
      }, RETRY_MS).unref();
    }
  }

  private async deploy(spec: DesiredFrame) {
    if (!this.release) return;
    const { release, env } = this.release;
    const image = await inspectImage(this.o.docker, release.artifact).catch(() => undefined);
    const d = await applyFrame(
      this.o.cluster,
      {
        frameId: this.frameId,
        namespace: this.namespace,
        release,
        env,
        replicas: spec.replica_count,
        port: spec.port,
        healthCheckPath: spec.health_check_path,
        volumes: spec.volumes,
        memoryMb: this.o.memoryMb,
        cpus: this.o.cpus,
        imageUser: image?.Config?.User,
        readOnlyRootFilesystem: wantsReadOnlyRoot(image?.Config?.Labels),
        storageClass: this.o.storageClass,
        node: this.o.registry ? undefined : this.o.node,
      },
      {
        ownNamespace: !this.o.namespace,
        projectId: spec.project_id,
        clusterCidrs: this.o.clusterCidrs,
        ingress: this.o.ingress,
        hosts: frameHosts(spec),
      },
    );
    const said = `${d.metadata?.generation}/${spec.replica_count}/${release.deploymentId}`;
    if (said === this.lastSent) return;
    this.lastSent = said;
    this.deps.line(
      this.frameId,
      0,
      `[frameplane] deployment ${d.metadata?.name} applied: ${spec.replica_count} × ${release.commitSha.slice(0, 12)}`,
    );
  }

  /** A look at the pods soon (many changes at once make one look), and every TICK_MS. */
  private wake() {
    if (this.woken || this.gone) return;
    this.woken = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.woken = false;
      void this.enqueue(() => this.look()).finally(() => {
        if (!this.gone && this.spec?.desired_state === 'running' && !this.woken) {
          clearTimeout(this.timer);
          this.timer = setTimeout(() => this.wake(), TICK_MS);
          this.timer.unref();
        }
      });
    }, 50);
    this.timer.unref();
  }

  /** What the cluster says of the frame's pods: routes, replicas' events, logs followed. */
  private async look() {
    const spec = this.spec;
    if (!spec || this.gone || spec.desired_state !== 'running') return;
    const { pods, events } = await this.o.watch.read(this.namespace, this.frameId);
    const count = spec.replica_count;
    this.slots = assignSlots(pods, this.slots, count);
    this.upstreams = readyEndpoints(pods, this.slots, spec.port);
    this.publish();
    const now = Date.now();
    const followed: Array<{ name: string; replica: number }> = [];
    const live: typeof this.live = [];
    for (const pod of pods) {
      const name = pod.metadata?.name ?? '';
      const slot = this.slots.get(name);
      if (slot === undefined) continue;
      const seen = observePod(pod, events, { now, startTimeoutMs: this.deps.startTimeoutMs });
      const replica = slot < count ? slot : FAILURES.has(seen.type) ? slot % count : undefined;
      if (replica === undefined) continue;
      if (pod.status?.containerStatuses?.length) followed.push({ name, replica });
      const ref = podRefOf(pod);
      const restarts = pod.status?.containerStatuses?.[0]?.restartCount ?? 0;
      if (ref && slot < count) live.push({ replica, pod: ref, restarts });
      if (this.failed.has(seen.deploymentId) || this.reported.get(replica) === seen.key) continue;
      this.reported.set(replica, seen.key);
      if (seen.type === 'crashed' || seen.type === 'oom')
        this.restarts.set(replica, (this.restarts.get(replica) ?? 0) + 1);
      this.report(replica, seen.type, seen.deploymentId, seen.detail);
      if (FAILURES.has(seen.type) && this.onTrial(seen.deploymentId))
        this.releaseFailed(seen.deploymentId, `pod ${name}: ${seen.type}`);
    }
    this.logs.follow(this.namespace, followed);
    this.live = live;
    this.tookOver(pods);
  }

  /** The release on trial took over once the frame's pods are all its own and Ready. */
  private tookOver(pods: V1Pod[]) {
    const id = this.release?.release.deploymentId;
    if (!this.previous || !this.spec || !id) return;
    const live = pods.filter((p) => !p.metadata?.deletionTimestamp);
    const ours = live.filter((p) => p.metadata?.labels?.[LABELS.deployment] === id && isReady(p));
    if (ours.length !== this.spec.replica_count || ours.length !== live.length) return;
    this.previous = undefined;
    this.deps.changed();
  }

  /** The earlier release's pod template is put back (rollback.ts), else its objects sent. */
  protected putBack() {
    const back = this.previous;
    const spec = this.spec;
    if (!back || !spec) return;
    this.release = back;
    this.previous = undefined;
    this.reported.clear();
    void this.enqueue(() =>
      this.sent(spec, async () => {
        const c = this.o.cluster;
        const id = back.release.deploymentId;
        if (!(await rollBack(c, this.namespace, this.frameId, id))) await this.deploy(spec);
      }),
    );
    this.deps.changed();
  }
}
