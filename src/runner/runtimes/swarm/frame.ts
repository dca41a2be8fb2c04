// The `swarm` runtime: a frame is a Docker Swarm service of `replica_count` tasks spread over
// the nodes (service.ts). Swarm schedules, restarts and rolls out (start-first, rollback
// when the new tasks fail); this supervisor builds the image, keeps the service's spec in step
// with the desired state, checks each task's health through its published port, routes the
// frame at the edge to the healthy ones (in slot order), and reports each slot's task as a
// replica.
//
// A new release takes over only once healthy (CONTRACT 5): while an earlier release serves, a
// task of the new one that fails, or never passes its health check, fails that deployment. Its
// one failure is reported, the earlier release goes back into the service (swarm's own rollback
// may be there first), and the deployment is never sent again. With nothing serving (a first
// deploy), swarm restarts failed tasks and the server's back-off counts each failure. The
// releases' bookkeeping (build, trial, put back, reports) is image-frame.ts's, as kubernetes'.
import type Docker from 'dockerode';
import { inspectImage, pruneImages } from '../../builder/image.ts';
import { ImageFrame } from '../image-frame.ts';
import { checkEveryMs, HTTP_EVERY_MS, passes, probe } from '../../health.ts';
import {
  nowIso,
  type FrameRunning,
  type FrameSupervisor,
  type SupervisorDeps,
} from '../../supervisor.ts';
import type { DesiredFrame, ReplicaEventType } from '../../protocol.ts';
import type { Endpoint } from '../runtime.ts';
import {
  applyService,
  findService,
  scaleService,
  serviceSpec,
  tasksOf,
  type TaskView,
} from './service.ts';
import { runAsUser, wantsReadOnlyRoot } from '../../builder/dockerfile.ts';
import { dockerUsage } from '../../metrics/docker-stats.ts';
import { ensureVolume } from '../docker-volume.ts';

export interface SwarmOptions {
  docker: Docker;
  baseImage: string;
  memoryMb: number;
  cpus: number;
  /** Where images go so every node can pull them; without one, tasks stay on this node. */
  registry?: string;
}

const POLL_MS = 1000;
const PENDING = new Set(['new', 'pending', 'assigned', 'accepted', 'ready']);
const FAILED = new Set(['failed', 'rejected']);

interface Health {
  healthy: boolean;
  since: number;
  reportedTimeout: boolean;
  speaksHttp: boolean;
  failures: number;
  checked: number;
  lastHttp: number;
}

export function swarmSupervisor(o: SwarmOptions) {
  let selfNode: Promise<string> | undefined;
  const nodeAddrs = new Map<string, string>();
  const addrOf = async (nodeId: string, self: string) => {
    if (nodeId === self) return '127.0.0.1';
    const known = nodeAddrs.get(nodeId);
    if (known) return known;
    const addr: string = (await o.docker.getNode(nodeId).inspect()).Status?.Addr ?? '127.0.0.1';
    nodeAddrs.set(nodeId, addr);
    return addr;
  };
  const self = () => (selfNode ??= o.docker.info().then((i) => i.Swarm?.NodeID as string));
  return (frameId: string, deps: SupervisorDeps): FrameSupervisor =>
    new SwarmFrame(frameId, deps, o, self, addrOf);
}

class SwarmFrame extends ImageFrame {
  private health = new Map<string, Health>();
  private failuresSeen = new Set<string>();
  /** What each slot's task of a release last failed of, until one in the slot is healthy. */
  private slotFailed = new Map<number, { deploymentId: string; reason: 'crash' | 'oom' }>();
  private timer?: NodeJS.Timeout;
  /** The tasks of the last poll that run on this node, whose containers the Engine here reads. */
  private local: TaskView[] = [];
  /** Tasks made before (an earlier agent's) are not this supervisor's restarts. */
  private readonly since = nowIso();

  constructor(
    frameId: string,
    deps: SupervisorDeps,
    private o: SwarmOptions,
    private self: () => Promise<string>,
    private addrOf: (node: string, self: string) => Promise<string>,
  ) {
    super(frameId, deps, o, 'swarm');
  }

  remove() {
    return this.enqueue(async () => {
      this.quit();
      this.deps.routes.remove(this.frameId);
      const s = await findService(this.o.docker, this.frameId);
      if (s)
        await this.o.docker
          .getService(s.ID)
          .remove()
          .catch(() => {});
      await pruneImages(this.o.docker, this.frameId, new Set()).catch(() => {});
    });
  }

  shutdown() {
    return this.enqueue(async () => {
      this.quit();
      await scaleService(this.o.docker, this.frameId, 0).catch(() => {});
      this.reportStopped();
    });
  }

  protected override quit() {
    super.quit();
    this.stopPolling();
  }

  /** The tasks running on this node (others' usage is their node's Engine's to read). */
  running(): FrameRunning {
    const instances = this.local.flatMap((t) => {
      const id = t.containerId;
      return id ? [{ index: t.slot - 1, id, usage: () => dockerUsage(this.o.docker, id) }] : [];
    });
    return { instances, restarts: this.restarts };
  }

  protected send(spec: DesiredFrame) {
    return this.deploy(spec);
  }

  protected async scaleToZero() {
    await scaleService(this.o.docker, this.frameId, 0);
  }

  protected watch() {
    this.startPolling();
  }

  private async deploy(spec: DesiredFrame) {
    if (!this.release) throw new Error(`frame ${this.frameId}: deploy before its release is known`);
    const { release, env } = this.release;
    const image = await inspectImage(this.o.docker, release.artifact);
    const user = runAsUser(image?.Config?.User);
    for (const v of spec.volumes) await ensureVolume(this.o.docker, this.o.baseImage, v, user);
    const sent = await applyService(
      this.o.docker,
      serviceSpec({
        frameId: this.frameId,
        release,
        env,
        replicas: spec.replica_count,
        port: spec.port,
        volumes: spec.volumes,
        memoryMb: this.o.memoryMb,
        cpus: this.o.cpus,
        user,
        readOnlyRoot: wantsReadOnlyRoot(image?.Config?.Labels),
        // A volume lives on the node that made it (this one): its frame's tasks stay there.
        nodeId: this.o.registry && spec.volumes.length === 0 ? undefined : await this.self(),
      }),
    );
    if (sent)
      this.deps.line(
        this.frameId,
        0,
        `[frameplane] swarm service updated: ${spec.replica_count} × ${release.commitSha.slice(0, 12)}`,
      );
  }

  /**
   * The release on trial failed while an earlier one served: the earlier one goes back into the
   * service (swarm's rollback may be under way already: then the spec is the same and nothing is
   * sent), its tasks are said again under the current generation.
   */
  protected putBack(deploymentId: string) {
    void this.enqueue(async () => {
      if (this.release?.release.deploymentId !== deploymentId || !this.previous) return;
      this.release = this.previous;
      this.previous = undefined;
      this.reported.clear();
      if (this.spec?.desired_state === 'running') await this.deploy(this.spec);
      this.deps.changed();
    });
  }

  private startPolling() {
    if (this.timer || this.gone) return;
    const tick = () => {
      this.timer = setTimeout(
        () =>
          void this.poll().finally(() => {
            if (this.timer) tick();
          }),
        POLL_MS,
      );
      this.timer.unref();
    };
    tick();
  }

  private stopPolling() {
    this.local = [];
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One look at the tasks: failures reported once each, health checked, each slot's state reported on change. */
  private async poll() {
    const spec = this.spec;
    if (!spec || this.gone || spec.desired_state !== 'running') {
      this.local = [];
      return;
    }
    let tasks: TaskView[];
    try {
      tasks = await tasksOf(this.o.docker, this.frameId);
    } catch {
      return;
    }
    const self = await this.self();
    this.local = tasks.filter((t) => t.state === 'running' && t.nodeId === self && t.slot > 0);
    for (const t of tasks) {
      if (!FAILED.has(t.state) || this.failuresSeen.has(t.id)) continue;
      this.failuresSeen.add(t.id);
      if (t.slot > 0 && t.createdAt >= this.since)
        this.restarts.set(t.slot - 1, (this.restarts.get(t.slot - 1) ?? 0) + 1);
      // A failed release's further failures (swarm restarts it until its rollback) are not news.
      if (this.failed.has(t.deploymentId)) continue;
      const oom =
        t.containerId && t.nodeId === self
          ? (
              await this.o.docker
                .getContainer(t.containerId)
                .inspect()
                .catch(() => undefined)
            )?.State?.OOMKilled === true
          : false;
      this.report(t.slot - 1, oom ? 'oom' : 'crashed', t.deploymentId, {
        exit_code: t.exitCode ?? null,
        message: t.error,
      });
      this.reported.delete(t.slot - 1);
      this.slotFailed.set(t.slot - 1, {
        deploymentId: t.deploymentId,
        reason: oom ? 'oom' : 'crash',
      });
      if (this.onTrial(t.deploymentId))
        this.releaseFailed(t.deploymentId, `a task exited (${t.error ?? 'failed'})`);
    }
    // A task swarm is shutting down (start-first replaced it) takes no new connections.
    const running = tasks.filter(
      (t): t is TaskView & { publishedPort: number } =>
        t.state === 'running' && t.desired === 'running' && !!t.publishedPort,
    );
    const checked = await Promise.all(
      running.map(async (t) => {
        const end = { host: await this.addrOf(t.nodeId, self), port: t.publishedPort };
        return { t, end, healthy: await this.check(t, end) };
      }),
    );
    // In slot order, then the newer task first (start-first updates run two in a slot).
    this.upstreams = checked
      .filter((c) => c.healthy)
      .sort((a, b) => a.t.slot - b.t.slot || b.t.createdAt.localeCompare(a.t.createdAt))
      .map((c) => c.end);
    this.publish();
    for (const h of this.health.keys()) if (!running.some((t) => t.id === h)) this.health.delete(h);
    // Each slot's newest task that is meant to run stands for its replica.
    const bySlot = new Map<number, TaskView>();
    for (const t of tasks) {
      if (t.desired !== 'running' || t.slot < 1 || this.failed.has(t.deploymentId)) continue;
      const prev = bySlot.get(t.slot);
      if (!prev || t.createdAt > prev.createdAt) bySlot.set(t.slot, t);
    }
    this.tookOver(spec, bySlot);
    for (const [slot, t] of bySlot) {
      const index = slot - 1;
      if (index >= spec.replica_count) continue;
      const h = this.health.get(t.id);
      const type: ReplicaEventType | undefined =
        t.state === 'preparing'
          ? 'pulling'
          : PENDING.has(t.state) || t.state === 'starting'
            ? 'starting'
            : t.state === 'running'
              ? h?.healthy
                ? 'healthy'
                : h?.reportedTimeout
                  ? 'unhealthy'
                  : 'starting'
              : undefined;
      if (!type) continue;
      const key = `${t.id}/${type}`;
      if (this.reported.get(index) === key) continue;
      this.reported.set(index, key);
      if (type === 'healthy') this.slotFailed.delete(index);
      // A task swarm restarts after a failure says so (the frame is Degraded, not Online).
      const failed = this.slotFailed.get(index);
      const restart = failed?.deploymentId === t.deploymentId ? failed.reason : undefined;
      this.report(
        index,
        type,
        t.deploymentId,
        type === 'unhealthy'
          ? { reason: 'start_timeout' }
          : restart
            ? { reason: restart }
            : undefined,
      );
      if (type === 'unhealthy' && this.onTrial(t.deploymentId))
        this.releaseFailed(t.deploymentId, `task ${slot} never passed its health check`);
    }
  }

  /** The release on trial took over once every slot runs it healthy: nothing to go back to. */
  private tookOver(spec: DesiredFrame, bySlot: Map<number, TaskView>) {
    if (!this.previous) return;
    for (let slot = 1; slot <= spec.replica_count; slot++) {
      const t = bySlot.get(slot);
      if (!t || !this.onTrial(t.deploymentId) || !this.health.get(t.id)?.healthy) return;
    }
    this.previous = undefined;
    this.deps.changed();
  }

  /** The health of one running task, checked through its published port; true if it may take connections. */
  private async check(t: TaskView, end: Endpoint): Promise<boolean> {
    let h = this.health.get(t.id);
    if (!h) {
      h = {
        healthy: false,
        since: Date.now(),
        reportedTimeout: false,
        speaksHttp: false,
        failures: 0,
        checked: 0,
        lastHttp: 0,
      };
      this.health.set(t.id, h);
    }
    // Healthy tasks are checked less often, mostly with a bare connect (no line in their access log).
    const now = Date.now();
    if (h.healthy && now - h.checked < checkEveryMs(true)) return true;
    h.checked = now;
    const http = !h.healthy || now - h.lastHttp >= HTTP_EVERY_MS;
    if (http) h.lastHttp = now;
    const p = await probe(end, { path: this.spec?.health_check_path || '/', http });
    if (p.kind === 'http') h.speaksHttp = true;
    if (passes(p, h.speaksHttp, http)) {
      h.healthy = true;
      h.failures = 0;
    } else if (++h.failures >= 3 || !h.healthy) {
      h.healthy = false;
      if (Date.now() - h.since > this.deps.startTimeoutMs) h.reportedTimeout = true;
    }
    return h.healthy;
  }
}
