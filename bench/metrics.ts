// `npm run bench` (and `bench:quick`), frame metrics (issue 39): (a) what metrics add to an
// agent's sync, 1,000 frames each reporting, against the same sync without them; (b) the
// tables after 30 simulated days (bench/metrics-simulate.ts) against the bound the retention
// settings give; (c) a query of one frame's last 24 h at 16 connections, against 50 ms p99.
// The service and the load generator are processes of their own, as in bench/run.ts. Writes
// bench/RESULTS-metrics.md (a quick run: RESULTS-metrics.quick.md).
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { createDatabase } from '../src/db/database.ts';
import { growthLimits } from '../src/config.ts';
import { startServer } from './database.ts';
import { cpuBetween, databaseCpu } from './cpu.ts';
import { startLoadGenerator, type Step } from './load.ts';
import { median } from './rounds.ts';
import { QUERY_CONNECTIONS, type Run, writeReport } from './metrics-report.ts';
import { seed } from './seed.ts';
import { benchSealer, startService } from './service.ts';
import { metricsDataset, metricsOf } from './metrics-data.ts';
import { simulate, type Simulated } from './metrics-simulate.ts';
import { at } from '../test/helpers/checked.ts';

const quick = process.argv.includes('--quick');
const FRAMES = 1000;
/** The sync's body limit (BODY_LIMIT_BYTES, 256 KiB) and the agent's batch (192 KiB) hold
 *  the samples of about 500 frames: an agent of 1,000 sends them in two syncs. */
const PER_SYNC = 500;
/** Frames of the 30-day simulation (b), `--frames=N`: the bound is per series, and 1,000
 *  frames' 30 days take most of an hour on two cores. */
const SIMULATED = Number(
  process.argv.find((a) => a.startsWith('--frames='))?.slice(9) ?? (quick ? 20 : 200),
);
const SECONDS = quick ? 3 : 5;
const ROUNDS = quick ? 1 : 3;
const RESULTS = fileURLToPath(
  new URL(quick ? './RESULTS-metrics.quick.md' : './RESULTS-metrics.md', import.meta.url),
);
const log = (line = '') => console.log(line);
const ms = (x: number) => x.toFixed(2);
const line = (runs: Run[]) => {
  const m = (f: (r: Run) => number) => ms(median(runs.map(f)));
  const cpu = `CPU ${m((r) => r.serviceMs)} ms service, ${m((r) => r.databaseMs)} ms database`;
  return `${m((r) => r.rps)} req/s, p50 ${m((r) => r.p50)} ms, p99 ${m((r) => r.p99)} ms; ${cpu}`;
};

async function main() {
  log(`Frameplane bench, frame metrics (${quick ? 'quick' : 'full'}): ${ROUNDS} × ${SECONDS} s`);
  const server = await startServer(log);
  const load = startLoadGenerator();
  const closing: Array<() => Promise<void>> = [];
  try {
    const url = await server.freshDatabase('metrics');
    const data = metricsDataset(FRAMES);
    const db = createDatabase(url, { max: 2, timeoutMs: 3_600_000 });
    let sim: Simulated;
    const retention = growthLimits({}).metricsRetention;
    try {
      await seed(db, data, benchSealer(), () => {});
      log(`\n(b) 30 days of ${SIMULATED} frames through the ingest and the prune`);
      const ids = data.frames.slice(0, SIMULATED).map((f) => f.id);
      // Thousands of commits that need not wait for the disk: no figure of the simulation is a
      // latency (the sync's own is measured over HTTP below). For its sessions only.
      const name = sql.id(new URL(url).pathname.slice(1));
      await sql`alter database ${name} set synchronous_commit = off`.execute(db);
      const simDb = createDatabase(url, { max: 2, timeoutMs: 3_600_000 });
      try {
        sim = await simulate(simDb, at(data.agents, 0).id, ids, retention, new Date(), log);
      } finally {
        await simDb.destroy();
        await sql`alter database ${name} reset synchronous_commit`.execute(db);
      }
    } finally {
      await db.destroy();
    }
    log(
      `  ${sim.rows} rows (bound ${sim.bound}; the most after a prune ${sim.mostAfterPrune}), ` +
        `${(sim.bytes / 2 ** 20).toFixed(1)} MiB, ingest ${ms(sim.ingestMs)} ms a sync`,
    );

    let service = await startService(url, 'warn');
    try {
      const agent = at(data.agents, 0);
      const sync = (body: object): Step => ({
        method: 'POST',
        token: agent.token,
        path: '/v2/agent/sync',
        body: JSON.stringify(body),
      });
      const state = await knownState(service.url, agent.token);
      const ids = data.frames.map((f) => f.id);
      const halves = [0, PER_SYNC].map((first) => ({
        known_state: state,
        metrics: metricsOf(ids.slice(first, first + PER_SYNC), 5, first),
      }));
      const database = await databaseCpu(url);
      /** A run, with the CPU the service's main thread and the database spent per request. */
      const run = async (sequences: Step[][], connections = 1): Promise<Run> => {
        const before = { service: service.cpu(), db: await database.snapshot() };
        const r = await load.run({ url: service.url, connections, seconds: SECONDS, sequences });
        const per = (us: number) => us / 1000 / Math.max(1, r.requests);
        return {
          ...r,
          serviceMs: per(service.cpu() - before.service),
          databaseMs: per(cpuBetween(before.db, await database.snapshot())),
        };
      };
      closing.push(() => database.close());
      const without = [[sync({ known_state: state })]];
      const withMetrics = halves.map((b) => [sync(b)]); // connections take them in turn
      log(`\n(a) a sync of ${FRAMES} frames, ${PER_SYNC} frames' samples in each, 1 connection`);
      await run(withMetrics); // warm-up
      const a = { without: [] as Run[], with: [] as Run[] };
      for (let round = 0; round < ROUNDS; round++) {
        a.without.push(await run(without));
        a.with.push(await run(withMetrics));
      }
      const bytes = Math.max(...halves.map((b) => JSON.stringify(b).length));
      log(`  without ${line(a.without)}\n  with    ${line(a.with)} (${bytes} B bodies)`);

      const frame = at(data.frames, 0);
      const project = at(data.projects, 0);
      const since = new Date(Date.now() - 86_400_000).toISOString();
      const framePath = `/v2/projects/${project.id}/spaces/${project.spaceId}/frames/${frame.id}`;
      const path = (q: string) => `${framePath}/metrics?since=${since}${q}`;
      const token = at(data.users, 0).token;
      const query = (q: string) => [[{ method: 'GET' as const, token, path: path(q) }]];
      log(`\n(c) 24 h of one frame (3 replicas), ${QUERY_CONNECTIONS} connections`);
      await run(query(''), QUERY_CONNECTIONS); // warm-up
      const c = {
        default: [] as Run[],
        minutes: [] as Run[],
        alone: [] as Run[],
        cold: [] as Run[],
      };
      for (let round = 0; round < ROUNDS; round++) {
        c.alone.push(await run(query('')));
        c.default.push(
          await service.profiled(`metrics-24h-${round + 1}`, () =>
            run(query(''), QUERY_CONNECTIONS),
          ),
        );
        c.minutes.push(await run(query('&step=60'), QUERY_CONNECTIONS));
      }
      log(`  default step ${line(c.default)}\n  by minutes   ${line(c.minutes)}`);
      log(`  1 connection ${line(c.alone)}`);
      // The first look at a frame, as every look without the memo of closed steps.
      await service.close();
      service = await startService(url, 'warn', { MEMO: 'off' });
      await run(query(''), QUERY_CONNECTIONS); // warm-up
      for (let round = 0; round < ROUNDS; round++)
        c.cold.push(await run(query(''), QUERY_CONNECTIONS));
      log(`  MEMO=off     ${line(c.cold)}`);
      const results = [...a.without, ...a.with, ...c.default, ...c.minutes, ...c.alone, ...c.cold];
      const errors = results.reduce((n, r) => n + r.errors + r.timeouts + non2xx(r), 0);
      const figures = { quick, frames: FRAMES, perSync: PER_SYNC, seconds: SECONDS };
      const file = writeReport(RESULTS, {
        ...figures,
        rounds: ROUNDS,
        sim,
        retention,
        a,
        bytes,
        c,
        errors,
        version: await server.version(),
      });
      log(`\nwrote ${file}`);
      return errors === 0 ? 0 : 1;
    } finally {
      await service.close();
    }
  } finally {
    for (const close of closing.reverse()) await close().catch((err) => console.error(err));
    await load.stop();
    await server.stop();
  }
}

const non2xx = (r: Run) =>
  Object.entries(r.statuses).reduce((n, [s, k]) => n + (s.startsWith('2') ? 0 : k), 0);

async function knownState(url: string, token: string) {
  const res = await fetch(`${url}/v2/agent/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  if (res.status !== 200) throw new Error(`the agent's first sync answered ${res.status}`);
  return ((await res.json()) as { state: string }).state;
}

main()
  .catch((err) => {
    console.error(err);
    return 1;
  })
  .then((code) => process.exit(code));
