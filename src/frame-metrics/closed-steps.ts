// The steps of a frame's metrics that have closed, remembered as the JSON text of their points
// (memo `metrics-steps`, src/memo.ts). A step's rows stop changing once it has ended: the ingest
// dates every sample by the service's clock when it arrives (metrics-ingest.ts). So a chart that
// asks for the last 24 h again reads only the steps since its last look from the database, and
// the answer is the remembered text with the new steps' after it. The frame's place is checked
// by the database on every read all the same (frame-metrics-service.ts).
import type { LRUCache } from 'lru-cache';
import type { Memos } from '../memo.ts';
import { MAX_POINTS, type Range } from './metrics-range.ts';
import {
  buildSteps,
  type ReplicaSums,
  type RequestSums,
  replicasOf,
  type Step,
} from './metrics-points.ts';

/** A frame's stored rows over a range (metrics-query-dal.ts). */
export interface Sums {
  usage: ReplicaSums[];
  requests: RequestSums[];
}

/**
 * How long after its end a step is taken as closed. A sample is dated when its sync starts and
 * lands when that sync's transaction commits; statements time out after 15 s and an idle
 * transaction after 60 s (db/connections.ts), so a sync still open this long has failed.
 */
export const CLOSED_AFTER_MS = 120_000;

/** A remembered step: its point's text, and each replica's that said anything. */
interface StepText {
  at: string;
  point: string;
  replicas: Map<number, string>;
}

/** Steps in a row, the first starting at `from` (ms since the epoch). */
interface Run {
  from: number;
  steps: StepText[];
}

/** Some 170 kB a day of five-minute steps of three replicas: 32 MiB hold ~190 such charts. */
const MAX_BYTES = 32 * 2 ** 20;

const textOf = (s: Step): StepText => ({
  at: s.point.at,
  point: JSON.stringify(s.point),
  replicas: new Map([...s.replicas].map(([r, p]) => [r, JSON.stringify(p)])),
});

const bytesOf = (run: Run) =>
  run.steps.reduce((n, s) => n + s.point.length + [...s.replicas.values()].join('').length, 64);

export function createClosedSteps(memos: Memos) {
  const runs: LRUCache<string, Run> = memos.lru<Run>('metrics-steps', {
    maxSize: MAX_BYTES,
    sizeCalculation: bytesOf,
  });

  /** The remembered steps from the range's start on (none if its start is not remembered). */
  function known(key: string, range: Range): StepText[] {
    const run = runs.get(key);
    if (!run) return [];
    const stepMs = range.step * 1000;
    const first = (range.since.getTime() - run.from) / stepMs;
    const count = (range.until.getTime() - range.since.getTime()) / stepMs;
    if (first < 0 || first >= run.steps.length) return [];
    return run.steps.slice(first, first + count);
  }

  return {
    /**
     * The answer's text (`head`'s fields, then the points): the remembered steps, then those
     * `read` gives from where they end, whose closed ones are remembered after them. Undefined
     * when `read` finds no frame.
     */
    async text(
      frameId: string,
      range: Range,
      head: object,
      now: Date,
      read: (rest: Range) => Promise<Sums | undefined>,
    ): Promise<string | undefined> {
      const key = `${frameId}/${range.resolution}/${range.step}`;
      const stepMs = range.step * 1000;
      const kept = known(key, range);
      const rest = { ...range, since: new Date(range.since.getTime() + kept.length * stepMs) };
      const sums = await read(rest);
      if (!sums) return undefined;
      const fresh = buildSteps(rest, sums.usage, sums.requests).map(textOf);
      const closed = Math.floor((now.getTime() - CLOSED_AFTER_MS - rest.since.getTime()) / stepMs);
      if (closed > 0) remember(key, stepMs, rest.since.getTime(), fresh.slice(0, closed));
      return assemble(head, [...kept, ...fresh]);
    },
  };

  /** Adds closed steps after the run they continue, or as a run of their own if newer. */
  function remember(key: string, stepMs: number, from: number, steps: StepText[]) {
    const run = runs.get(key);
    const end = run ? run.from + run.steps.length * stepMs : undefined;
    let next: Run;
    if (run && end === from) next = { from: run.from, steps: [...run.steps, ...steps] };
    else if (end === undefined || from + steps.length * stepMs > end) next = { from, steps };
    else return;
    // No answer holds more steps than MAX_POINTS: older ones could serve no range.
    const extra = next.steps.length - MAX_POINTS;
    if (extra > 0) next = { from: next.from + extra * stepMs, steps: next.steps.slice(extra) };
    runs.set(key, next);
  }
}

export type ClosedSteps = ReturnType<typeof createClosedSteps>;

/** A replica's point of a step it said nothing in, as `replicaPoint(at, undefined)` writes it. */
const silentReplica = (at: string) =>
  `{"at":"${at}","cpu_cores":null,"memory_bytes":null,"memory_limit_bytes":null}`;

/** The answer as JSON text: `head`'s fields, then the points and each replica's. */
function assemble(head: object, steps: StepText[]) {
  const replicas = replicasOf(steps).map((replica) => {
    let points = '';
    for (const s of steps) {
      const text = s.replicas.get(replica) ?? silentReplica(s.at);
      points += points ? `,${text}` : text;
    }
    return `{"replica":${replica},"points":[${points}]}`;
  });
  const points = steps.map((s) => s.point).join(',');
  const fields = JSON.stringify(head).slice(0, -1);
  return `${fields},"points":[${points}],"replicas":[${replicas.join(',')}]}`;
}
