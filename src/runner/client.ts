// The sync loop (CONTRACT 6): one POST /v2/agent/sync at a time, carrying what happened, and
// answered with the whole desired state. The first sync does not wait; after it, the agent
// long-polls (?wait=25) with an empty body. A long poll carries nothing, so it can be cut short
// safely when there is something to report: a report (wait=0) follows at once. A report whose
// fate is unknown (timeout, server gone) is sent again, so events are never lost; the server
// may then see one twice, which is the lesser harm. While the server is unreachable the frames
// keep running and the loop retries with growing delays. An item the server would refuse is
// repaired or dropped alone before it is queued (sync-check.ts); a report the server refuses
// all the same is sent again in parts, and only the items it refuses alone are dropped
// (sync-split.ts): one frame's bad item never costs another frame's events or lines. The
// agent's edge (where it serves frames by hostname, or null) rides on every sync until one
// is answered, the first as a rule: the service keeps it, and it does not change while the
// agent runs.
import type { AgentLog } from './log.ts';
import {
  MAX_EVENTS_PER_SYNC,
  MAX_LOGS_PER_SYNC,
  type BuildReport,
  type Answer,
  type DesiredFrame,
  type SyncEvent,
  type SyncLog,
} from './protocol.ts';
import { restartDelayMs } from './replica.ts';
import { sleep } from './processes.ts';
import {
  checkBuild,
  checkEvent,
  checkLog,
  checkReplicaMetric,
  checkRequestMetric,
  type Checked,
} from './sync-check.ts';
import { type Batch, type Item, isEmpty, itemsOf, splitBatch } from './sync-split.ts';
import type { EdgeInfo } from './edge/edge.ts';
import { MetricsQueue, type Metrics } from './metrics/queue.ts';

export type { Batch } from './sync-split.ts';

/** The service's default body limit is 256 KiB; a batch stays well under it. */
export const MAX_BATCH_BYTES = 192 * 1024;
/** Beyond this many unsent lines (a long outage), the oldest lines go. Events are never dropped
 *  for want of room (only one the server refuses, alone). */
export const MAX_QUEUED_LOGS = 20_000;
export const LONG_POLL_SECONDS = 25;
/** The part of a batch that metrics samples may take, before log lines. */
export const MAX_METRICS_BYTES = 64 * 1024;

/** The head of the queues that fits one sync: counts and bytes capped, order kept; build
 *  reports (few, small) first. */
export function takeBatch(
  events: SyncEvent[],
  logs: SyncLog[],
  maxBytes = MAX_BATCH_BYTES,
  builds: BuildReport[] = [],
): Batch {
  const out: Batch = { events: [], logs: [] };
  let bytes = 32;
  if (builds.length) {
    out.builds = builds.slice(0, 100);
    bytes += Buffer.byteLength(JSON.stringify(out.builds));
  }
  for (const e of events) {
    const size = Buffer.byteLength(JSON.stringify(e)) + 1;
    if (
      out.events.length >= MAX_EVENTS_PER_SYNC ||
      (out.events.length > 0 && bytes + size > maxBytes)
    )
      return out;
    out.events.push(e);
    bytes += size;
  }
  for (const l of logs) {
    const size = Buffer.byteLength(JSON.stringify(l)) + 1;
    if (out.logs.length >= MAX_LOGS_PER_SYNC || bytes + size > maxBytes) break;
    out.logs.push(l);
    bytes += size;
  }
  return out;
}

/** An item the server would refuse, as it was given: repaired (and queued so) or dropped. */
export interface Invalid {
  item: Item;
  why: string;
  dropped: boolean;
}

export class Outbox {
  private events: SyncEvent[] = [];
  private logs: SyncLog[] = [];
  private builds: BuildReport[] = [];
  private samples = new MetricsQueue();
  dropped = 0;

  constructor(
    private onPending: (kind: 'event' | 'log') => void = () => {},
    private onInvalid: (bad: Invalid) => void = () => {},
  ) {}

  event(e: SyncEvent) {
    const ok = this.checked({ kind: 'event', value: e }, checkEvent(e));
    if (!ok) return;
    this.events.push(ok);
    this.onPending('event');
  }

  build(b: BuildReport) {
    const ok = this.checked({ kind: 'build', value: b }, checkBuild(b));
    if (!ok) return;
    this.builds.push(ok);
    this.onPending('event');
  }

  log(frameId: string, replica: number, line: string, source?: 'app' | 'build' | 'edge') {
    const at = new Date().toISOString();
    const l = { frame_id: frameId, replica, at, line, ...(source ? { source } : {}) };
    const ok = this.checked({ kind: 'log', value: l }, checkLog(l)); // a long line is cut there
    if (!ok) return;
    this.logs.push(ok);
    if (this.logs.length > MAX_QUEUED_LOGS)
      this.dropped += this.logs.splice(0, this.logs.length - MAX_QUEUED_LOGS).length;
    this.onPending('log');
  }

  /** One interval's samples (metrics/sampler.ts); each checked alone, like every item. */
  metrics(m: Metrics) {
    for (const value of m.replicas ?? []) {
      const ok = this.checked({ kind: 'replica_metric', value }, checkReplicaMetric(value));
      if (ok) this.samples.replica(ok);
    }
    for (const value of m.requests ?? []) {
      const ok = this.checked({ kind: 'request_metric', value }, checkRequestMetric(value));
      if (ok) this.samples.request(ok);
    }
    if (this.samples.size > 0) this.onPending('log');
  }

  /** The item to queue, if any. Lines repaired are not told: an app's output would flood
   *  the agent's log. */
  private checked<T>(item: Item, c: Checked<T>): T | undefined {
    if ('refused' in c) {
      this.onInvalid({ item, why: c.refused, dropped: true });
      return undefined;
    }
    if (c.repaired && item.kind !== 'log')
      this.onInvalid({ item, why: c.repaired, dropped: false });
    return c.item;
  }

  get pending() {
    return this.events.length + this.logs.length + this.builds.length + this.samples.size > 0;
  }
  get hasEvents() {
    return this.events.length + this.builds.length > 0;
  }

  batch(): Batch {
    const { metrics, bytes } = this.samples.take(MAX_METRICS_BYTES);
    const b = takeBatch(this.events, this.logs, MAX_BATCH_BYTES - bytes, this.builds);
    return metrics ? { ...b, metrics } : b;
  }

  /** Removes what the server took, or refused alone. By identity, not position: a report sent
   *  in parts is taken part by part, and lines may have been dropped meanwhile. */
  ack(b: Batch) {
    this.events = without(this.events, b.events);
    this.builds = without(this.builds, b.builds ?? []);
    this.logs = without(this.logs, b.logs);
    this.samples.ack(b.metrics);
  }
}

function without<T>(queue: T[], sent: T[]) {
  if (sent.length === 0) return queue;
  const gone = new Set(sent);
  return queue.filter((x) => !gone.has(x));
}

class HttpError extends Error {
  /** What the server says is wrong: its problem's detail, else the start of the body. */
  readonly why: string;
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`sync answered ${status}: ${body.slice(0, 300)}`);
    let detail: unknown;
    try {
      detail = JSON.parse(body).detail;
    } catch {}
    this.why = `${status}: ${(typeof detail === 'string' ? detail : body).slice(0, 300)}`;
  }
}

/** The server will answer the same to the same body (malformed, too large, not valid). */
const isRefusal = (err: unknown): err is HttpError =>
  err instanceof HttpError && (err.status === 400 || err.status === 413 || err.status === 422);

export interface ClientOptions {
  server: string;
  token: string;
  log: AgentLog;
  /** The agent's edge, told on the first sync; null: it has none. Undefined: never told. */
  edge?: EdgeInfo | null;
  onAnswer(frames: DesiredFrame[]): void;
}

export class SyncClient {
  readonly outbox: Outbox;
  private stopped = new AbortController();
  private poll?: AbortController;
  private cutTimer?: NodeJS.Timeout;
  /** The last desired state told, and its digest. */
  private held?: { state: string; frames: DesiredFrame[] };
  /** Set once the first sync succeeded; tests and the CLI may await it. */
  connected = false;
  /** The edge is still to be told. */
  private edgeUntold: boolean;

  constructor(private o: ClientOptions) {
    this.edgeUntold = o.edge !== undefined;
    this.outbox = new Outbox(
      (kind) => this.cutLongPoll(kind === 'event' ? 50 : 1000),
      (bad) => this.tell(bad),
    );
  }

  /** One line per item repaired or dropped: which frame, what, why. */
  private tell({ item, why, dropped }: Invalid) {
    const v = item.value;
    const where =
      'frame_id' in v
        ? { frame_id: v.frame_id }
        : { frame_id: this.frameOf(v.deployment_id), deployment_id: v.deployment_id };
    this.o.log[dropped ? 'error' : 'warn'](
      { ...where, item: item.kind, why },
      dropped
        ? `${item.kind} dropped: the server does not accept it`
        : `${item.kind} repaired for the server to accept it`,
    );
  }

  /** The frame whose latest deployment this is, as the server last told. */
  private frameOf(deploymentId: string) {
    return this.held?.frames.find((f) => f.deployment_id === deploymentId)?.frame_id ?? null;
  }

  /** Ends a long poll in flight soon, so that a report can go out: events at once, lines
   *  batched. */
  private cutLongPoll(afterMs: number) {
    if (!this.poll || this.cutTimer) return;
    const poll = this.poll;
    this.cutTimer = setTimeout(() => {
      this.cutTimer = undefined;
      poll.abort();
    }, afterMs);
  }

  private async post(
    wait: number,
    body: Partial<Batch> & { known_state?: string; edge?: EdgeInfo | null },
    signal: AbortSignal,
  ) {
    const edge = this.edgeUntold;
    if (edge) body = { ...body, edge: this.o.edge };
    const res = await fetch(`${this.o.server.replace(/\/+$/, '')}/v2/agent/sync?wait=${wait}`, {
      method: 'POST',
      signal,
      headers: {
        authorization: `Bearer ${this.o.token}`,
        'content-type': 'application/json',
        'user-agent': 'frameplane-agent',
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) {
      // A service older than the edge refuses the field: the agent syncs without telling it.
      if (edge && res.status === 422 && /\bedge\b/.test(text)) {
        this.edgeUntold = false;
        this.o.log.warn({ why: text.slice(0, 300) }, 'the service does not take the edge');
      }
      throw new HttpError(res.status, text);
    }
    if (edge) this.edgeUntold = false;
    return JSON.parse(text) as Answer;
  }

  async run(): Promise<void> {
    let failures = 0;
    let first = true;
    while (!this.stopped.signal.aborted) {
      const batch = this.outbox.batch();
      const longPoll = !first && isEmpty(batch);
      const own = new AbortController();
      if (longPoll) this.poll = own;
      const started = Date.now();
      try {
        const signal = () =>
          AbortSignal.any([
            own.signal,
            this.stopped.signal,
            AbortSignal.timeout((longPoll ? LONG_POLL_SECONDS + 20 : 30) * 1000),
          ]);
        // The state held is sent along: while it is current, the answer is only `unchanged`.
        const known = this.held ? { known_state: this.held.state } : {};
        const answer = longPoll
          ? await this.post(LONG_POLL_SECONDS, known, signal())
          : await this.report(batch, known, signal);
        if (failures > 0) this.o.log.info({ after_failures: failures }, 'server reachable again');
        failures = 0;
        first = false;
        this.connected = true;
        if (!answer.unchanged || !this.held)
          this.held = { state: answer.state, frames: answer.frames ?? [] };
        this.o.onAnswer(this.held.frames);
        // A server that answers a long poll at once, again and again, must not make us spin.
        if (longPoll && Date.now() - started < 500 && !this.outbox.pending)
          await sleep(1000, this.stopped.signal);
      } catch (err) {
        if (this.stopped.signal.aborted) break;
        if (own.signal.aborted) continue; // cut short on purpose: the report goes now
        // A known_state the server refuses (a newer server's digest) is not sent again.
        if (err instanceof HttpError && err.status === 422) this.held = undefined;
        failures++;
        const delay = restartDelayMs(failures - 1);
        const msg =
          err instanceof HttpError && err.status === 401
            ? 'the server rejects the agent token'
            : (err as Error).message;
        this.o.log[failures === 1 || failures % 10 === 0 ? 'warn' : 'debug'](
          { err: msg, retry_in_ms: delay, failures },
          'sync failed; frames keep running',
        );
        await sleep(delay, this.stopped.signal);
      } finally {
        if (this.poll === own) this.poll = undefined;
        clearTimeout(this.cutTimer);
        this.cutTimer = undefined;
      }
    }
  }

  /** One last report (on exit): best effort, bounded in time. */
  async flush(timeoutMs = 5000): Promise<void> {
    const batch = this.outbox.batch();
    if (isEmpty(batch)) return;
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      await this.report(batch, {}, () => deadline);
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, 'final report not delivered');
    }
  }

  /** Sends a report and removes it from the outbox; a report refused is sent again in parts. */
  private async report(
    batch: Batch,
    known: { known_state?: string },
    signal: () => AbortSignal,
  ): Promise<Answer> {
    try {
      return await this.send(batch, known, signal());
    } catch (err) {
      if (!isRefusal(err) || isEmpty(batch)) throw err;
      // Refused without a report too (a proxy that refuses everything, a known_state no longer
      // read): no item is to blame, none is dropped; the loop retries as after any failure.
      const answer = await this.post(0, {}, signal());
      this.o.log.warn(
        { why: err.why, builds: batch.builds?.length ?? 0, events: batch.events.length },
        'sync refused a report; sending it in parts to find the items it refuses',
      );
      return (await this.inParts(batch, err, signal)) ?? answer;
    }
  }

  private async send(batch: Batch, known: { known_state?: string }, signal: AbortSignal) {
    const answer = await this.post(0, { ...known, ...batch }, signal);
    this.outbox.ack(batch);
    return answer;
  }

  /** Splits a refused batch (per frame, then halves) and sends the parts in order; an item
   *  refused alone is dropped. Parts go without known_state: only items are to blame. A failure
   *  of another kind stops here, and what was not taken is sent again by the loop. */
  private async inParts(
    batch: Batch,
    refusal: HttpError,
    signal: () => AbortSignal,
  ): Promise<Answer | undefined> {
    const parts = splitBatch(batch);
    if (parts.length === 0) {
      for (const item of itemsOf(batch)) this.tell({ item, why: refusal.why, dropped: true });
      this.outbox.ack(batch);
      return undefined;
    }
    let last: Answer | undefined;
    for (const part of parts) {
      try {
        last = await this.send(part, {}, signal());
      } catch (err) {
        if (!isRefusal(err)) throw err;
        last = (await this.inParts(part, err, signal)) ?? last;
      }
    }
    return last;
  }

  stop() {
    this.stopped.abort();
  }
}
