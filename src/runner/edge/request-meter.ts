// What the edge answered per frame (issue 39): responses by status class and a histogram of
// their latency in the buckets of LATENCY_BOUNDS_MS, counted by both data planes (server.ts
// per response; the HAProxy plane from its access log, haproxy/access-log.ts) and taken by the
// metrics sampler every interval (metrics/sampler.ts). Counts only: a few numbers per frame,
// whatever the traffic. Switching protocols (WebSockets) counts as 1xx without a latency: the
// time of a tunnel is its life, not an answer's.
import type { Static } from 'typebox';
import { MAX_SAMPLE_SECONDS } from '../metrics/deltas.ts';
import { LATENCY_BOUNDS_MS, type SyncRequestMetricItem } from '../../agent-api/sync-items.ts';

export type RequestMetric = Static<typeof SyncRequestMetricItem>;
export type StatusClass = keyof RequestMetric['status'];

const CLASSES: StatusClass[] = ['1xx', '2xx', '3xx', '4xx', '5xx'];

/** The histogram bucket of a latency: the first whose upper bound (inclusive) holds it, else
 *  the last, open one. */
export function bucketOf(ms: number): number {
  let lo = 0;
  let hi: number = LATENCY_BOUNDS_MS.length; // the answer is in [lo, hi]
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ms <= (LATENCY_BOUNDS_MS[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The class of an HTTP status; undefined for what is none (HAProxy's -1: no answer sent). */
export function classOf(status: number): StatusClass | undefined {
  return Number.isInteger(status) && status >= 100 && status <= 599
    ? CLASSES[Math.floor(status / 100) - 1]
    : undefined;
}

export interface FrameRequests {
  status: Record<StatusClass, number>;
  latency: number[];
}

const empty = (): FrameRequests => ({
  status: { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 },
  latency: new Array(LATENCY_BOUNDS_MS.length + 1).fill(0),
});

export class RequestMeter {
  private frames = new Map<string, FrameRequests>();

  /** One answer for the frame: its status and the ms from the request's head to its end. */
  record(frameId: string, status: number, ms: number) {
    const c = classOf(status);
    if (!c) return;
    let f = this.frames.get(frameId);
    if (!f) {
      f = empty();
      this.frames.set(frameId, f);
    }
    f.status[c]++;
    if (c !== '1xx' && Number.isFinite(ms)) (f.latency[bucketOf(Math.max(0, ms))] as number)++;
  }

  /** What was counted since the last take, per frame with answers; counting starts over. */
  take(): Map<string, FrameRequests> {
    const taken = this.frames;
    this.frames = new Map();
    return taken;
  }
}

/** Two samples of one frame, one after the other (a sync that waited): one covering both;
 *  undefined when that would cover more than an item may (the later one alone is kept). */
export function mergeRequestSamples(a: RequestMetric, b: RequestMetric): RequestMetric | undefined {
  const seconds = a.seconds + b.seconds;
  if (seconds > MAX_SAMPLE_SECONDS) return undefined;
  const status = { ...a.status };
  for (const c of CLASSES) status[c] += b.status[c];
  return {
    frame_id: b.frame_id,
    seconds,
    status,
    latency: a.latency.map((n, i) => n + (b.latency[i] ?? 0)),
  };
}
