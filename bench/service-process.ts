// The service in a process of its own, built as src/main.ts builds it (no job worker: nothing
// measured here enqueues a job), at the log level it has in production unless the bench is told
// otherwise; its log goes wherever the bench points this process's standard output. Beside the
// API, one route of our own (`/bench/own-route`: auth + one indexed query on the same hooks and
// pool), reported for comparison, not held to anything.
import '../src/heap.ts';
import v8 from 'node:v8';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.ts';
import { createDatabase } from '../src/db/database.ts';
import { systemClock } from '../src/clock.ts';
import { createNotifier } from '../src/db/notifier.ts';
import { createServices } from '../src/services.ts';
import { buildApp } from '../src/app.ts';
import { actorOf } from '../src/http/auth.ts';
import { createLogger } from '../src/logger.ts';
import { BENCH_SECRET_KEY, benchSealer } from './service.ts';
import { serve } from './ipc.ts';
import { startProfile, stopProfile } from './profile.ts';

const databaseUrl = process.env.DATABASE_URL ?? '';
const config = loadConfig({
  DATABASE_URL: databaseUrl,
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? '',
  SECRET_KEY: BENCH_SECRET_KEY,
  DATA_DIR: '/tmp/frameplane-bench-unused',
});

let queries = 0;

async function start() {
  const log = createLogger(config.logLevel); // as src/main.ts
  const db = createDatabase(databaseUrl, {
    max: config.databasePoolSize,
    timeoutMs: config.databaseTimeoutMs, // as src/main.ts
    onStatement: () => queries++,
  });
  const clock = systemClock(db, { testClock: config.testClock });
  await clock.refresh();
  const notifier = createNotifier(databaseUrl);
  const core = { config, db, clock, sealer: benchSealer(), notifier };
  const app = await buildApp(core, createServices(core), { logger: log, isReady: () => true });
  app.get('/bench/own-route', { config: { auth: 'user' }, schema: { hide: true } }, async (req) =>
    db
      .selectFrom('users')
      .select(['id', 'email', 'name', 'created_at'])
      .where('id', '=', actorOf(req).userId)
      .executeTakeFirstOrThrow(),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      await notifier.close();
      await db.destroy();
      log.flush();
    },
  };
}

const ready = start();

type Request =
  | { type: 'url' | 'queries' | 'memory' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; dir: string; name: string };

serve(
  async (body: Request) => {
    const service = await ready;
    switch (body.type) {
      case 'url':
        return service.url;
      case 'queries':
        return queries;
      case 'memory': {
        const used = process.memoryUsage();
        // BENCH_HEAP_SNAPSHOT=<file>: what the memory is, for DevTools' Memory tab.
        const file = process.env.BENCH_HEAP_SNAPSHOT;
        if (file) v8.writeHeapSnapshot(file);
        return used;
      }
      case 'profile-start':
        return startProfile();
      case 'profile-stop':
        return stopProfile(body.dir, body.name);
    }
  },
  async () => (await ready).close(),
);
