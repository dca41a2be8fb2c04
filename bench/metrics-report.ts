// bench/RESULTS-metrics.md: the figures of bench/metrics.ts in bench/RESULTS.md's style, a table
// of measurements, then the targets of issue 39 each met or missed.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import type { LoadResult } from './load.ts';
import { machine } from './report.ts';
import { median } from './rounds.ts';
import type { Simulated } from './metrics-simulate.ts';

/** A run and the CPU of one request, in ms: the service's main thread's and the database's. */
export type Run = LoadResult & { serviceMs: number; databaseMs: number };

export const MAX_QUERY_P99_MS = 50;
export const QUERY_CONNECTIONS = 16;

export interface Figures {
  quick: boolean;
  frames: number;
  perSync: number;
  seconds: number;
  rounds: number;
  sim: Simulated;
  retention: { minuteHours: number; hourDays: number };
  a: { without: Run[]; with: Run[] };
  bytes: number;
  c: { default: Run[]; minutes: Run[]; alone: Run[]; cold: Run[] };
  errors: number;
  version: string;
}

const ms = (x: number) => x.toFixed(2);
const med = (runs: Run[], f: (r: Run) => number) => median(runs.map(f));
/** ms a request at one connection, from its rate (the load generator's p50 rounds to 1 ms). */
const each = (runs: Run[]) => 1000 / med(runs, (r) => r.rps);
const cpu = (runs: Run[]) =>
  `${ms(med(runs, (r) => r.serviceMs))} + ${ms(med(runs, (r) => r.databaseMs))}`;

/** Writes the report next to this file; answers its path. */
export function writeReport(file: string, f: Figures): string {
  const { sim, retention: r, a, c } = f;
  const m = machine(f.version);
  const load = os.loadavg().map((x) => x.toFixed(1));
  const query = med(c.default, (x) => x.p99);
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  const ratio = each(a.with) / each(a.without);
  const at16 = `@${QUERY_CONNECTIONS}`;
  const lines = [
    `# Frame metrics: ${m.date}, ${f.seconds} s runs, ${f.rounds} round(s), medians` +
      (f.quick ? ' (quick)' : ''),
    '',
    `${m.cpu}, ${m.memory}, Node.js ${m.node}, ${m.postgres}; commit ${m.commit}; ` +
      `load average at the end ${load.join(', ')} (other work shared the machine).`,
    "CPU: ms of the service's main thread + ms of the database's processes, per request.",
    '',
    '| measurement | figure | CPU |',
    '|---|---|---|',
    `| a sync of ${f.frames} frames, nothing to report (known_state), 1 connection | ` +
      `${ms(each(a.without))} ms | ${cpu(a.without)} |`,
    `| the same with ${f.perSync} frames' samples (${f.perSync + 2} replicas, ${f.perSync} ` +
      `request histograms; ${Math.round(f.bytes / 1024)} KiB) | ${ms(each(a.with))} ms | ` +
      `${cpu(a.with)} |`,
    `| ingest cost: with / without | ${ratio.toFixed(2)} × | |`,
    `| ${f.frames} frames' samples every 10 s (two such syncs) | ` +
      `${ms((2 * each(a.with)) / 100)} % of one connection's time | |`,
    `| 30 days of ${sim.frames} frames (${sim.series} series), ${sim.syncs} syncs in ` +
      `${sim.seconds.toFixed(0)} s | ${sim.rows} rows, ${mib(sim.bytes)} | |`,
    `| ingest of those syncs (in-process) | ${ms(sim.ingestMs)} ms a sync | |`,
    `| GET …/metrics, 24 h, default step (300 s, 289 points, five-minute rows) ${at16} | ` +
      `${med(c.default, (x) => x.rps).toFixed(0)} req/s, p99 ${ms(query)} ms | ${cpu(c.default)} |`,
    `| the same by minutes (step=60, 1441 points, minute rows) ${at16} | ` +
      `${med(c.minutes, (x) => x.rps).toFixed(0)} req/s, ` +
      `p99 ${ms(med(c.minutes, (x) => x.p99))} ms | ${cpu(c.minutes)} |`,
    `| the default step at 1 connection | ${ms(each(c.alone))} ms | ${cpu(c.alone)} |`,
    `| the default step ${at16}, nothing remembered (MEMO=off: every step read) | ` +
      `${med(c.cold, (x) => x.rps).toFixed(0)} req/s, p99 ${ms(med(c.cold, (x) => x.p99))} ms | ` +
      `${cpu(c.cold)} |`,
    '',
    '| target | measured | |',
    '|---|---|---|',
    `| rows ≤ bound: series × (${r.minuteHours} h × (60 + 12) + 2 + ${r.hourDays} d × 24 + 1) | ` +
      `${sim.mostAfterPrune} ≤ ${sim.bound} | ` +
      `${sim.mostAfterPrune <= sim.bound ? 'met' : 'missed'} |`,
    `| 24 h of one frame < ${MAX_QUERY_P99_MS} ms p99 ${at16} | ${ms(query)} ms | ` +
      `${query < MAX_QUERY_P99_MS ? 'met' : 'missed'} |`,
    `| no errors in any run | ${f.errors} | ${f.errors === 0 ? 'met' : 'missed'} |`,
    '',
    'A chart read again reads only the steps that may still change: those that ended over 2 ' +
      'minutes ago are remembered as text (src/frame-metrics/closed-steps.ts, memo ' +
      '`metrics-steps`); the MEMO=off row is the first look at a frame.',
    '',
    `Bytes per row kept: ${Math.round(sim.bytes / Math.max(1, sim.rows))} (tables and indexes, ` +
      'after a plain VACUUM, so pruned space counts until it is reused).',
  ];
  for (const l of lines.slice(5)) console.log(l);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}
