// The agent's metrics sampler (issue 39): every interval (METRICS_INTERVAL_SECONDS, 10 s), each
// frame's supervisor names the replicas it runs, their runtime reads what each used (docker's
// stats, cgroup files, /proc), and the edge says what it answered per frame; the samples go to
// the sync's outbox (client.ts), which sends them in the next sync's `metrics`. Looks never
// overlap: the next is timed from the end of the last. A replica gone mid-look is skipped.
import type { AgentLog } from '../log.ts';
import type { FrameSupervisor } from '../supervisor.ts';
import type { RequestMeter } from '../edge/request-meter.ts';
import type { Usage } from '../runtimes/runtime.ts';
import { MAX_SAMPLE_SECONDS, ReplicaDeltas, type Reading } from './deltas.ts';
import type { Metrics } from './queue.ts';

export const DEFAULT_METRICS_INTERVAL_MS = 10_000;
/** A runtime that has not answered by then is skipped this time. */
const READ_TIMEOUT_MS = 5000;

export interface SamplerOptions {
  intervalMs: number;
  /** The frames of this agent now, by id. */
  frames(): Iterable<[string, FrameSupervisor]>;
  requests?: RequestMeter;
  send(m: Metrics): void;
  log: AgentLog;
  /** A monotonic clock in ms (tests); performance.now by default. */
  now?: () => number;
}

const within = (p: Promise<Usage | undefined>, ms: number) =>
  Promise.race([
    p.catch(() => undefined),
    new Promise<undefined>((r) => setTimeout(() => r(undefined), ms).unref()),
  ]);

export class MetricsSampler {
  private deltas = new ReplicaDeltas();
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private lastRequests: number;
  private running?: Promise<void>;
  private readonly now: () => number;

  constructor(private o: SamplerOptions) {
    this.now = o.now ?? (() => performance.now());
    this.lastRequests = this.now();
  }

  start() {
    this.schedule();
  }

  private schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sample()
        .catch((err) => this.o.log.warn({ err }, 'metrics sample failed'))
        .finally(() => this.schedule());
    }, this.o.intervalMs);
    this.timer.unref();
  }

  /** One look at every frame; what it finds goes to `send`. */
  async sample(): Promise<void> {
    const frames = [...this.o.frames()];
    const looks = await Promise.all(
      frames.map(async ([frameId, supervisor]) => {
        const { instances, restarts } = supervisor.running();
        const readings: Reading[] = await Promise.all(
          instances.map(async (i) => ({
            index: i.index,
            id: i.id,
            usage: await within(i.usage(), READ_TIMEOUT_MS),
          })),
        );
        return { frameId, readings, restarts };
      }),
    );
    const at = this.now();
    const replicas = looks.flatMap((l) =>
      this.deltas.sample(l.frameId, l.readings, l.restarts, at),
    );
    this.deltas.keep(new Set(frames.map(([id]) => id)));
    const metrics: Metrics = replicas.length ? { replicas } : {};
    const taken = this.o.requests?.take();
    const seconds = (at - this.lastRequests) / 1000;
    this.lastRequests = at;
    if (taken?.size && seconds > 0 && seconds <= MAX_SAMPLE_SECONDS)
      metrics.requests = [...taken].map(([frame_id, r]) => ({ frame_id, seconds, ...r }));
    if (metrics.replicas || metrics.requests) this.o.send(metrics);
  }

  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
