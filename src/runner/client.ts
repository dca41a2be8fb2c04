// The sync loop (CONTRACT 6): one POST /v2/agent/sync at a time, carrying what happened, and
// answered with the whole desired state. The first sync does not wait; after it, the agent
// long-polls (?wait=25) with an empty body. A long poll carries nothing, so it can be cut short
// safely when there is something to report: a report (wait=0) follows at once. A report whose
// fate is unknown (timeout, server gone) is sent again, so events are never lost; the server
// may then see one twice, which is the lesser harm. While the server is unreachable the frames
// keep running and the loop retries with growing delays.
import type { AgentLog } from './log.ts';
import {
  MAX_EVENTS_PER_SYNC,
  MAX_LINE_CHARS,
  MAX_LOGS_PER_SYNC,
  type BuildReport,
  type Answer,
  type DesiredFrame,
  type SyncEvent,
  type SyncLog,
} from './protocol.ts';
import { restartDelayMs } from './replica.ts';
import { sleep } from './processes.ts';

/** The service's default body limit is 256 KiB; a batch stays well under it. */
export const MAX_BATCH_BYTES = 192 * 1024;
/** Beyond this many unsent lines (a long outage), the oldest lines go. Events are never dropped. */
export const MAX_QUEUED_LOGS = 20_000;
export const LONG_POLL_SECONDS = 25;

export interface Batch {
  events: SyncEvent[];
  logs: SyncLog[];
  builds?: BuildReport[];
}

/** The head of the queues that fits one sync: counts and bytes capped, order kept; build reports (few, small) first. */
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

export class Outbox {
  private events: SyncEvent[] = [];
  private logs: SyncLog[] = [];
  private builds: BuildReport[] = [];
  dropped = 0;

  constructor(private onPending: (kind: 'event' | 'log') => void = () => {}) {}

  event(e: SyncEvent) {
    this.events.push(e);
    this.onPending('event');
  }

  build(b: BuildReport) {
    this.builds.push(b);
    this.onPending('event');
  }

  log(frameId: string, replica: number, line: string) {
    const text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS - 1)}…` : line;
    this.logs.push({ frame_id: frameId, replica, at: new Date().toISOString(), line: text });
    if (this.logs.length > MAX_QUEUED_LOGS)
      this.dropped += this.logs.splice(0, this.logs.length - MAX_QUEUED_LOGS).length;
    this.onPending('log');
  }

  get pending() {
    return this.events.length + this.logs.length + this.builds.length > 0;
  }
  get hasEvents() {
    return this.events.length + this.builds.length > 0;
  }

  batch(): Batch {
    return takeBatch(this.events, this.logs, MAX_BATCH_BYTES, this.builds);
  }

  /** Removes what the server took. Lines dropped meanwhile are matched by identity, not position. */
  ack(b: Batch) {
    this.events.splice(0, b.events.length); // events are never dropped, so the head is the batch
    this.builds.splice(0, b.builds?.length ?? 0);
    if (b.logs.length) {
      const sent = new Set(b.logs);
      this.logs = this.logs.filter((l) => !sent.has(l));
    }
  }
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    body: string,
  ) {
    super(`sync answered ${status}: ${body.slice(0, 300)}`);
  }
}

export interface ClientOptions {
  server: string;
  token: string;
  log: AgentLog;
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

  constructor(private o: ClientOptions) {
    this.outbox = new Outbox((kind) => this.cutLongPoll(kind === 'event' ? 50 : 1000));
  }

  /** Ends a long poll in flight soon, so that a report can go out: events at once, lines batched. */
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
    body: Partial<Batch> & { known_state?: string },
    signal: AbortSignal,
  ) {
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
    if (res.status !== 200) throw new HttpError(res.status, text);
    return JSON.parse(text) as Answer;
  }

  async run(): Promise<void> {
    let failures = 0;
    let first = true;
    while (!this.stopped.signal.aborted) {
      const batch = this.outbox.batch();
      const longPoll =
        !first && batch.events.length === 0 && batch.logs.length === 0 && !batch.builds?.length;
      const own = new AbortController();
      if (longPoll) this.poll = own;
      const started = Date.now();
      try {
        const signal = AbortSignal.any([
          own.signal,
          this.stopped.signal,
          AbortSignal.timeout((longPoll ? LONG_POLL_SECONDS + 20 : 30) * 1000),
        ]);
        // The state held is sent along: while it is current, the answer is only `unchanged`.
        const known = this.held ? { known_state: this.held.state } : {};
        const answer = await this.post(
          longPoll ? LONG_POLL_SECONDS : 0,
          longPoll ? known : { ...known, ...batch },
          signal,
        );
        this.outbox.ack(batch);
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
        if (err instanceof HttpError && (err.status === 413 || err.status === 422)) {
          // The server will never take this batch; retrying would block every later report.
          this.o.log.error(
            { err: err.message, events: batch.events.length, logs: batch.logs.length },
            'sync refused a batch; dropping it',
          );
          this.outbox.ack(batch);
          continue;
        }
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
    if (!batch.events.length && !batch.logs.length && !batch.builds?.length) return;
    try {
      await this.post(0, batch, AbortSignal.timeout(timeoutMs));
      this.outbox.ack(batch);
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message }, 'final report not delivered');
    }
  }

  stop() {
    this.stopped.abort();
  }
}
