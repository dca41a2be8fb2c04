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
  /** The stack's limit's median req/s over the rounds, at the same connection count (itself, for the limit). */
  limitRps: number;
  /** req/s over the limit's, round by round (bench/rounds.ts). */
  ratios: number[];
  /** 1-minute load average when the run ended: above ~3, something else was using the machine. */
  load: number;
  /** µs of CPU per request on the answering process's main thread, and in the database server's processes (bench/cpu.ts). */
  serviceUsPerRequest: number;
  databaseUsPerRequest: number;
  /** Cold runs: requests made by a caller taken before (bench/cold.ts), i.e. warm ones. */
  repeated?: number;
}

/** The targets of issue 13, each a ratio or a figure of one run on this machine. */
export const AIM_RATIO = 0.8;
export const MIN_WARM_RATIO = 0.6;
export const MIN_COLD_RATIO = 0.4;
export const MAX_READ_P99_MS = 15;
export const AT_CONNECTIONS = 16;
export const MAX_P50_GROWTH = 1.3;
export const MIN_STOPSTART_RATIO = 0.25;
export const MAX_STOPSTART_STATEMENTS = 4;
export const MAX_SYNC_P50_MS = 5;
export const SYNC_AT_CONNECTIONS = 1;
export const MAX_RSS_MB = 250;

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

const label = (m: Measurement) =>
  m.repeated
    ? `${m.scenario.name} (${m.repeated} of ${m.result.requests} requests by a caller taken before)`
    : m.scenario.name;

export const TABLE_HEAD = [
  '| endpoint | conns | req/s | p50 ms | p99 ms | limit req/s | × limit | queries/req | process µs/req | db µs/req | failed | load |',
  '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|',
];

export function tableRow(m: Measurement): string {
  return (
    `| ${label(m)} | ${m.connections} | ${Math.round(m.result.rps)} | ${ms(m.result.p50)} | ${ms(m.result.p99)} | ` +
    `${Math.round(m.limitRps)} | ${ratioText(m)} | ${m.queriesPerRequest.toFixed(2)} | ${us(m.serviceUsPerRequest)} | ${us(m.databaseUsPerRequest)} | ` +
    `${problems(m.result)} | ${m.load.toFixed(1)} |`
  );
}

/** Project reads at AT_CONNECTIONS, alternating between the two datasets. */
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
  detail: string;
  /** Only these fail a quick run. */
  serviceError?: boolean;
}

/** Resident memory of the large dataset's service once every measurement on it was made. */
export interface Memory {
  rssBytes: number;
  /** V8's heap (used, and reserved) and memory outside it (buffers): where the resident goes. */
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  after: string;
}

const MB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
/** "272 MB (heap 120 of 180 MB, outside it 12 MB)". */
export const memoryLine = (m: Memory) =>
  `${MB(m.rssBytes)} (heap ${MB(m.heapUsedBytes)} used of ${MB(m.heapTotalBytes)}, ` +
  `buffers and other memory outside it ${MB(m.externalBytes)})`;

export function evaluate(
  all: Measurement[],
  access: AccessCheck | undefined,
  memory: Memory,
): Target[] {
  const targets: Target[] = [];
  const failed = [
    ...all.map((m) => ({ name: `${m.scenario.name} @${m.connections}`, r: m.result })),
    ...[...(access?.small ?? []), ...(access?.large ?? [])].map((r) => ({
      name: 'access check',
      r,
    })),
  ].filter((x) => !clean(x.r));
  targets.push({
    what: 'every answer 2xx, no socket errors or timeouts (no 503 from cloud frames)',
    pass: failed.length === 0,
    serviceError: true,
    detail: failed.map((x) => `${x.name}: ${problems(x.r)}`).join('; ') || 'none failed',
  });
  const at16 = all.filter((m) => m.connections === AT_CONNECTIONS);
  for (const m of at16.filter((x) => x.scenario.kind === 'read')) {
    const r = ratio(m);
    const cold = m.scenario.temperature === 'cold';
    const min = cold ? MIN_COLD_RATIO : MIN_WARM_RATIO;
    targets.push({
      what: `${m.scenario.name} @${m.connections}: req/s ≥ ${min} × the stack's limit`,
      pass: r >= min,
      detail:
        ratioText(m) +
        (cold ? '' : ` (aim ${AIM_RATIO}: ${r >= AIM_RATIO ? 'reached' : 'not reached'})`) +
        (m.repeated
          ? `; ${m.repeated} of ${m.result.requests} requests by a caller taken before`
          : ''),
    });
  }
  for (const m of at16.filter((x) => x.scenario.kind === 'read')) {
    targets.push({
      what: `${m.scenario.name} @${m.connections}: p99 < ${MAX_READ_P99_MS} ms`,
      pass: m.result.p99 < MAX_READ_P99_MS,
      detail: `${ms(m.result.p99)} ms`,
    });
  }
  if (access) {
    const growth = p50Of(access.large) / p50Of(access.small);
    targets.push({
      what: `access check @${AT_CONNECTIONS}: p50 on the large dataset ≤ ${MAX_P50_GROWTH} × the small one, both warmed the same way`,
      pass: growth <= MAX_P50_GROWTH,
      detail: `${ms(p50Of(access.large))} ms vs ${ms(p50Of(access.small))} ms (× ${growth.toFixed(2)})`,
    });
  }
  for (const m of at16.filter((x) => x.scenario.key === 'stopstart')) {
    targets.push({
      what: `${m.scenario.name} @${m.connections}: req/s ≥ ${MIN_STOPSTART_RATIO} × the stack's limit`,
      pass: ratio(m) >= MIN_STOPSTART_RATIO,
      detail: ratioText(m),
    });
    targets.push({
      what: `${m.scenario.name} @${m.connections}: ≤ ${MAX_STOPSTART_STATEMENTS} statements per request`,
      pass: m.queriesPerRequest <= MAX_STOPSTART_STATEMENTS,
      detail: m.queriesPerRequest.toFixed(2),
    });
  }
  for (const m of all.filter(
    (x) => x.scenario.key === 'sync' && x.connections === SYNC_AT_CONNECTIONS,
  )) {
    targets.push({
      what: `${m.scenario.name} @${m.connections}: p50 < ${MAX_SYNC_P50_MS} ms`,
      pass: m.result.p50 < MAX_SYNC_P50_MS,
      detail: `${ms(m.result.p50)} ms`,
    });
  }
  const mb = memory.rssBytes / 2 ** 20;
  targets.push({
    what: `resident memory of the service ${memory.after} ≤ ${MAX_RSS_MB} MB`,
    pass: mb <= MAX_RSS_MB,
    detail: memoryLine(memory),
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
  memory: Memory;
  logLevel: string;
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
    "- processes: the service, the stack's limit and the load generator (autocannon) each in a process of its own, children of the bench's, with PostgreSQL, all on this machine",
    `- service log level: ${r.logLevel}; the stack's limit logs nothing (Fastify's default)`,
    `- memory: ${memoryLine(r.memory)} resident in the service ${r.memory.after}`,
    '',
    '## Datasets',
    '',
    ...r.datasets.map((d) => `- ${d}`),
    ...r.notes.map((n) => `- ${n}`),
    '',
    '## Figures',
    '',
    "Every row is held against the stack's limit: a separate process of Fastify and `pg` alone, one route doing one indexed primary-key query (a project by id), no auth, on the same PostgreSQL, with as many connections as the service's pool. " +
      'The machine is shared and its speed drifts, so each endpoint was measured in rounds, each right after a run of the limit at the same connection count; ' +
      '`× limit` is the median of the per-round ratios (their range in brackets), and the targets hold it. `req/s`, `p50` and `p99` are medians over the rounds. ' +
      '*Warm* runs take the same callers over and over (the role memo and the token cache hold them); *cold* runs take, each request, a caller the service has not seen: ' +
      'for project and frame reads a (user, project) pair no earlier request made (the role memo is keyed by it), for the team reads a user not taken before (its token not cached). ' +
      'A cold pool that runs out starts over, and the row says how many requests were made by a caller taken before. ' +
      '`queries/req` counts statements sent to PostgreSQL per request (round trips, BEGIN/COMMIT included). ' +
      "`process µs/req` is the CPU the answering process's main thread spent per request, `db µs/req` that of the PostgreSQL server's processes (– when the server is on another machine): on two shared cores they tell a heavier query from a heavier response. " +
      '`load` is the 1-minute load average at the end of the run: the bench itself keeps about 2 to 3 busy (the answering process, the load generator, PostgreSQL); more means other work shared the two cores. ' +
      "Our own route (auth and one indexed query, inside the service) is reported for comparison with the limit: the distance between them is our pipeline's.",
    '',
    ...TABLE_HEAD,
    ...r.measurements.map(tableRow),
    '',
    `## Access check on a dataset ten times smaller (GET /v2/projects/:id, ${AT_CONNECTIONS} connections)`,
    '',
    'Each dataset was served by a service started for this check, and both were warmed the same way (the same seconds of their own warm project reads, at the same connection count) before being measured in turn (small then large, then large then small, so that a drift of the machine weighs on both alike), each run as long as the others; the verdict compares the mean p50 of each.',
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
