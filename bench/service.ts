// Starts the real service in-process, built as src/main.ts builds it (no job worker: nothing
// measured here enqueues a job), plus one baseline route on the same app instance.
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.ts';
import { createDatabase, createPool } from '../src/db/database.ts';
import { systemClock } from '../src/clock.ts';
import { createNotifier } from '../src/db/notifier.ts';
import { sealer } from '../src/secrets.ts';
import { createServices } from '../src/services.ts';
import { buildApp } from '../src/app.ts';
import { actorOf } from '../src/http/auth.ts';
import { databaseCpu, type DatabaseCpu } from './cpu.ts';

export const BENCH_SECRET_KEY = 'frameplane-bench-secret-key';
export const benchSealer = () => sealer(BENCH_SECRET_KEY);

export interface RunningService {
  url: string;
  /** Statements sent to PostgreSQL so far (BEGIN and COMMIT included): round trips. */
  queries(): number;
  /** CPU of the database server's processes (bench/cpu.ts). */
  database: DatabaseCpu;
  close(): Promise<void>;
}

export async function startService(databaseUrl: string): Promise<RunningService> {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    SECRET_KEY: BENCH_SECRET_KEY,
    DATA_DIR: '/tmp/frameplane-bench-unused',
  });
  const pool = createPool(databaseUrl, {
    max: config.databasePoolSize,
    timeoutMs: config.databaseTimeoutMs,
  }); // as src/main.ts
  let queries = 0;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: typeof query }).query = (...args) => {
      queries++;
      return query(...args);
    };
  });
  const db = createDatabase(pool);
  const clock = systemClock(db, { testClock: config.testClock });
  await clock.refresh();
  const notifier = createNotifier(databaseUrl);
  const core = { config, db, clock, sealer: benchSealer(), notifier };
  const app = await buildApp(core, createServices(core)); // no logger: LOG_LEVEL silent

  // What every read is held against: a minimal authenticated route on the same stack (hooks,
  // auth, error mapping, pool) doing one indexed query.
  app.get('/bench/baseline', { config: { auth: 'user' }, schema: { hide: true } }, async (req) =>
    db
      .selectFrom('users')
      .select(['id', 'email', 'name', 'created_at'])
      .where('id', '=', actorOf(req).userId)
      .executeTakeFirstOrThrow(),
  );

  await app.listen({ port: 0, host: '127.0.0.1' });
  const database = await databaseCpu(databaseUrl);
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    queries: () => queries,
    database,
    async close() {
      await database.close();
      await app.close();
      await notifier.close();
      await db.destroy();
    },
  };
}
