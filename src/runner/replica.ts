// One replica as the supervisor sees it: a running instance from a runtime (a process or a
// container), its health checks and its state. The runtime knows how it runs; this knows
// whether it serves. The supervisor (frame-runner.ts) decides about restarts.
import type { ReplicaEventType } from './protocol.ts';
import type { ReplicaRuntime, ReplicaSpec, RunningReplica } from './runtimes/runtime.ts';
import { checkEveryMs, FAILURES_FOR_UNHEALTHY, HTTP_EVERY_MS, passes, probe } from './health.ts';

/** Restart delays after successive crashes: 1 s, 2 s, 4 s… capped at 30 s. */
export function restartDelayMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, Math.min(attempt, 15)));
}

/** Healthy this long, a replica's next crash starts the delays over. */
export const STABLE_AFTER_MS = 10_000;
export const STOP_GRACE_MS = 10_000;

export interface ExitReport {
  code: number | null;
  signal: string | null;
  oom: boolean;
  ranHealthyMs: number;
}

/** Out of memory: the runtime says so (the container's OOM-killed flag), or Node ran out of heap. */
export function isOomExit(runtimeSaysOom: boolean, heapExhausted: boolean): boolean {
  return runtimeSaysOom || heapExhausted;
}

export interface ReplicaHooks {
  report(type: ReplicaEventType, detail?: Record<string, unknown>): void;
  line(line: string): void;
  exited(info: ExitReport): void;
}

export interface HealthOptions {
  path: string;
  startTimeoutMs: number;
}

export class Replica {
  state: 'starting' | 'healthy' | 'unhealthy' | 'exited' = 'starting';
  private stopping = false;
  private timer?: NodeJS.Timeout;
  private failures = 0;
  private speaksHttp = false;
  private heapExhausted = false;
  private timedOut = false;
  private lastHttp = 0;
  private readonly startedAt = Date.now();
  private healthySince?: number;
  private running!: RunningReplica;

  private constructor(
    readonly index: number,
    private hooks: ReplicaHooks,
    private health: HealthOptions,
  ) {}

  /** A line of the app's output: Node's own message when its heap is full marks an out-of-memory death. */
  private line = (l: string) => {
    if (l.includes('JavaScript heap out of memory')) this.heapExhausted = true;
    this.hooks.line(l);
  };

  static async start(
    runtime: ReplicaRuntime,
    spec: ReplicaSpec,
    hooks: ReplicaHooks,
    health: HealthOptions,
  ): Promise<Replica> {
    const r = new Replica(spec.index, hooks, health);
    r.running = await runtime.start(spec, r.line);
    hooks.report('starting');
    r.watch();
    return r;
  }

  /** Takes over a replica an earlier agent left running, if the runtime finds it; its lines flow here. */
  static async adoptWith(
    adopt: (onLine: (l: string) => void) => Promise<RunningReplica | undefined>,
    index: number,
    hooks: ReplicaHooks,
    health: HealthOptions,
  ) {
    const r = new Replica(index, hooks, health);
    const running = await adopt(r.line);
    if (!running) return undefined;
    r.running = running;
    r.watch();
    return r;
  }

  private watch() {
    void this.running.exit.then((info) => this.onExit(info.code, info.signal, info.oom));
    this.schedule(0);
  }

  ref() {
    return this.running.ref();
  }
  /** What it used so far, as its runtime counts it (metrics). */
  usage() {
    return this.running.usage();
  }
  get endpoint() {
    return this.running.endpoint;
  }
  get healthy() {
    return this.state === 'healthy';
  }
  get exited() {
    return this.state === 'exited';
  }

  private schedule(ms: number) {
    if (this.over) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.check(), ms);
    this.timer.unref();
  }

  /** Exited, or being stopped: health checks no longer matter. */
  private get over() {
    return this.state === 'exited' || this.stopping;
  }

  private async check() {
    if (this.over) return;
    const http = this.state !== 'healthy' || Date.now() - this.lastHttp >= HTTP_EVERY_MS;
    const p = await probe(this.running.endpoint, { path: this.health.path, http });
    if (this.over) return;
    if (http) this.lastHttp = Date.now();
    if (p.kind === 'http') this.speaksHttp = true;
    if (passes(p, this.speaksHttp, http)) {
      this.failures = 0;
      if (this.state !== 'healthy') {
        this.state = 'healthy';
        this.healthySince = Date.now();
        this.hooks.report('healthy');
      }
    } else {
      this.failures++;
      const age = Date.now() - this.startedAt;
      if (this.state === 'starting' && !this.timedOut && age > this.health.startTimeoutMs) {
        // Never answered: not "starting" for ever, the frame shows health_check_failed.
        this.timedOut = true;
        this.state = 'unhealthy';
        const why =
          p.kind === 'http'
            ? `answers ${p.status} on ${this.health.path}`
            : 'does not answer on its port';
        const message = `replica ${this.index} ${why} after ${Math.round(age / 1000)} s`;
        this.hooks.line(`[frameplane] ${message}; it is unhealthy`);
        // The message is what a deployment that fails for it shows (failure_message).
        this.hooks.report('unhealthy', { reason: 'start_timeout', message });
      } else if (this.state === 'healthy' && this.failures >= FAILURES_FOR_UNHEALTHY) {
        this.state = 'unhealthy';
        this.healthySince = undefined;
        this.hooks.report('unhealthy', { reason: p.kind === 'http' ? `http_${p.status}` : p.kind });
      }
    }
    this.schedule(checkEveryMs(this.state === 'healthy'));
  }

  private onExit(code: number | null, signal: string | null, oom: boolean) {
    if (this.state === 'exited') return;
    const ranHealthyMs = this.healthySince ? Date.now() - this.healthySince : 0;
    this.state = 'exited';
    clearTimeout(this.timer);
    if (!this.stopping)
      this.hooks.exited({ code, signal, oom: isOomExit(oom, this.heapExhausted), ranHealthyMs });
  }

  /** Stops it (SIGTERM, then SIGKILL after the grace period); resolves once it is gone. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    if (this.state === 'exited') return;
    this.stopping = true;
    clearTimeout(this.timer);
    await this.running.stop(graceMs);
    this.state = 'exited';
  }

  /** Leaves it running (the agent exits and a later one adopts it). */
  detach() {
    clearTimeout(this.timer);
    this.stopping = true;
    this.running.detach();
  }
}
