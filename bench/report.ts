// The figures as a table, the targets they are held to, and bench/RESULTS.md.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { clean, type LoadResult } from './load.ts';
import { median } from './rounds.ts';
import type { Scenario } from './scenarios.ts';

export interface Measurement {
  scenario: Scenario;
  connections: number;
  result: LoadResult;
  queriesPerRequest: number;
  /** The baseline's median req/s over the rounds, at the same connection count (itself, for the baseline). */
  baselineRps: number;
  /** req/s over the baseline's, round by round (bench/rounds.ts). */
  ratios: number[];
  /** 1-minute load average when the run ended: above ~3, something else was using the machine. */
  load: number;
  /** µs of CPU per request on the service's thread, and in the database server's processes (bench/cpu.ts). */
  serviceUsPerRequest: number;
  databaseUsPerRequest: number;
}

export const AIM_RATIO = 0.8;
export const MIN_RATIO = 0.5;
export const MAX_READ_P99_MS = 25;
export const P99_AT_CONNECTIONS = 16;
export const MAX_P50_GROWTH = 1.3;

const ms = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(2));
const us = (x: number) => (Number.isNaN(x) ? '–' : String(Math.round(x)));

export const ratio = (m: Measurement) => median(m.ratios);

const ratioText = (m: Measurement) =>
  m.ratios.length < 2
    ? ratio(m).toFixed(2)
    : `${ratio(m).toFixed(2)} (${Math.min(...m.ratios).toFixed(2)}–${Math.max(...m.ratios).toFixed(2)})`;

const problems = (r: LoadResult) => {
  const bad = Object.entries(r.statuses)
    .filter(([s]) => !s.startsWith('2'))
    .map(([s, n]) => `${n}×${s}`);
  if (r.errors) bad.push(`${r.errors} errors`);
  if (r.timeouts) bad.push(`${r.timeouts} timeouts`);
  return bad.join(', ') || '0';
};

export const TABLE_HEAD = [
  '| endpoint | conns | req/s | p50 ms | p99 ms | baseline req/s | × baseline | queries/req | service µs/req | db µs/req | failed | load |',
  '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|',
];

export function tableRow(m: Measurement): string {
  return (
    `| ${m.scenario.name} | ${m.connections} | ${Math.round(m.result.rps)} | ${ms(m.result.p50)} | ${ms(m.result.p99)} | ` +
    `${Math.round(m.baselineRps)} | ${ratioText(m)} | ${m.queriesPerRequest.toFixed(2)} | ${us(m.serviceUsPerRequest)} | ${us(m.databaseUsPerRequest)} | ` +
    `${problems(m.result)} | ${m.load.toFixed(1)} |`
  );
}

/** Project reads at P99_AT_CONNECTIONS, alternating between the two datasets. */
export interface AccessCheck {
  small: LoadResult[];
  large: LoadResult[];
  smallUsers: number;
  largeUsers: number;
}
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
export const p50Of = (runs: LoadResult[]) => mean(runs.map((r) => r.p50));
export interface Target {
  what: string;
  pass: boolean;
  detail: string /** Only errors fail a quick run. */;
  serviceError?: boolean;
}

export function evaluate(all: Measurement[], access: AccessCheck): Target[] {
  const targets: Target[] = [];
  const failed = [
    ...all.map((m) => ({ name: `${m.scenario.name} @${m.connections}`, r: m.result })),
    ...[...access.small, ...access.large].map((r) => ({ name: 'access check', r })),
  ].filter((x) => !clean(x.r));
  targets.push({
    what: 'every answer 2xx, no socket errors or timeouts (no 503 from cloud frames)',
    pass: failed.length === 0,
    serviceError: true,
    detail: failed.map((x) => `${x.name}: ${problems(x.r)}`).join('; ') || 'none failed',
  });
  for (const m of all.filter((x) => x.scenario.kind === 'read')) {
    const r = ratio(m);
    targets.push({
      what: `${m.scenario.name} @${m.connections}: req/s ≥ ${MIN_RATIO} × baseline`,
      pass: r >= MIN_RATIO,
      detail: `${ratioText(m)} (aim ${AIM_RATIO}: ${r >= AIM_RATIO ? 'reached' : 'not reached'})`,
    });
  }
  for (const m of all.filter(
    (x) => x.scenario.kind === 'read' && x.connections === P99_AT_CONNECTIONS,
  )) {
    targets.push({
      what: `${m.scenario.name} @${m.connections}: p99 < ${MAX_READ_P99_MS} ms`,
      pass: m.result.p99 < MAX_READ_P99_MS,
      detail: `${ms(m.result.p99)} ms`,
    });
  }
  const growth = p50Of(access.large) / p50Of(access.small);
  targets.push({
    what: `access check @${P99_AT_CONNECTIONS}: p50 on the large dataset ≤ ${MAX_P50_GROWTH} × the small one`,
    pass: growth <= MAX_P50_GROWTH,
    detail: `${ms(p50Of(access.large))} ms vs ${ms(p50Of(access.small))} ms (× ${growth.toFixed(2)})`,
  });
  return targets;
}

export const targetLine = (t: Target) => `- ${t.pass ? 'PASS' : 'MISS'} ${t.what}: ${t.detail}`;

export interface Machine {
  cpu: string;
  memory: string;
  node: string;
  postgres: string;
  date: string;
  commit: string;
}

export function machine(postgres: string): Machine {
  const cpus = os.cpus();
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'} × ${cpus.length}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    postgres,
    date: new Date().toISOString(),
    // The figures are of the work tree, which may differ from the commit.
    commit: git('status', '--porcelain', '--', 'src', 'migrations', 'package.json')
      ? `${commit} (with uncommitted changes)`
      : commit,
  };
}

export interface Report {
  mode: 'full' | 'quick' | 'partial';
  seconds: number;
  rounds: number;
  machine: Machine;
  datasets: string[];
  notes: string[];
  measurements: Measurement[];
  access: AccessCheck;
  targets: Target[];
}

export function writeResults(file: string, r: Report) {
  const lines = [
    '# Frameplane benchmark',
    '',
    `Written by \`npm run ${r.mode === 'full' ? 'bench' : 'bench:quick'}\` (${r.mode}: ${r.rounds} × ${r.seconds} s per measurement). Do not edit by hand; run it again.`,
    '',
    `- date: ${r.machine.date}`,
    `- commit: ${r.machine.commit}`,
    `- machine: ${r.machine.cpu}, ${r.machine.memory}, Node.js ${r.machine.node}`,
    `- database: ${r.machine.postgres}`,
    '- load: autocannon in a worker thread of the bench process, the service on its main thread, all on this machine',
    '',
    '## Datasets',
    '',
    ...r.datasets.map((d) => `- ${d}`),
    ...r.notes.map((n) => `- ${n}`),
    '',
    '## Figures',
    '',
    'The machine is shared and its speed drifts, so each endpoint was measured in rounds, each right after a baseline run at the same connection count; ' +
      '`× baseline` is the median of the per-round ratios (their range in brackets), and the targets hold it. `req/s`, `p50` and `p99` are medians over the rounds. `queries/req` counts statements sent to PostgreSQL per request (round trips, BEGIN/COMMIT included). ' +
      "`service µs/req` is the CPU the service's thread spent per request (the load generator's thread apart), `db µs/req` that of the PostgreSQL server's processes (– when the server is on another machine): on two shared cores they tell a heavier query from a heavier response. " +
      '`load` is the 1-minute load average at the end of the run: the bench itself keeps about 2 to 3 busy (service thread, load thread, PostgreSQL); more means other work shared the two cores.',
    '',
    ...TABLE_HEAD,
    ...r.measurements.map(tableRow),
    '',
    `## Access check on a dataset ten times smaller (GET /v2/projects/:id, ${P99_AT_CONNECTIONS} connections)`,
    '',
    'The two datasets were measured in turn, each run as long as the others; the verdict compares the mean p50 of each.',
    '',
    '| dataset | users | run | req/s | p50 ms | p99 ms |',
    '|---|--:|--:|--:|--:|--:|',
    ...(['small', 'large'] as const).flatMap((k) =>
      r.access[k].map(
        (x, i) =>
          `| ${k} | ${k === 'small' ? r.access.smallUsers : r.access.largeUsers} | ${i + 1} | ${Math.round(x.rps)} | ${ms(x.p50)} | ${ms(x.p99)} |`,
      ),
    ),
    '',
    '## Targets',
    '',
    ...r.targets.map(targetLine),
    '',
  ];
  writeFileSync(file, lines.join('\n'));
}
