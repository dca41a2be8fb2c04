// Builds the real application on a fresh database for one test file. Requests go through
// Fastify's HTTP layer (inject), against real PostgreSQL; nothing is mocked.
import type { Logger } from 'pino';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.ts';
import { createDatabase, createPool } from '../../src/db/database.ts';
import { systemClock } from '../../src/clock.ts';
import { sealer } from '../../src/secrets.ts';
import { createServices } from '../../src/services.ts';
import { buildApp, type App } from '../../src/app.ts';
import { startWorker } from '../../src/jobs/worker.ts';
import { createDelivery } from '../../src/mail/deliver.ts';
import { freshDatabaseUrl } from './database.ts';
import { createNotifier } from '../../src/db/notifier.ts';
import { tableResolver, type TableResolver } from './dns.ts';

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Start the job worker (mail delivery); off by default so outbox rows stay inspectable. */
  worker?: boolean;
  logger?: Logger;
  /** DNS for domain verification; a fresh empty table unless given. Tests never query real DNS. */
  dns?: TableResolver;
  /** SECRET_KEY's stand-in; another one is a key rotated since the tokens were issued. */
  secretKey?: string;
}

export interface Reply {
  status: number;
  json: any;
  text: string;
  headers: Record<string, string | string[] | number | undefined>;
}

export async function testApp(opts: TestAppOptions = {}) {
  return testAppOn(await freshDatabaseUrl(), opts);
}

/** A second instance on the same database, as behind a load balancer. */
export async function testAppOn(url: string, opts: TestAppOptions = {}) {
  const config: Config = loadConfig({
    PORT: '8080',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://frameplane.test',
    ADMIN_TOKEN: 'admin-token-for-tests',
    TEST_CLOCK: '1',
    DATA_DIR: '/tmp/frameplane-unused',
    DATABASE_URL: url,
    // CI runs the HTTP and authorization tests once more with MEMO=off (memo.ts).
    ...(process.env.MEMO ? { MEMO: process.env.MEMO } : {}),
    ...opts.env,
  });
  const pool = createPool(url, { max: 10 });
  const db = createDatabase(pool);
  const clock = systemClock(db, { testClock: config.testClock });
  await clock.refresh();
  const notifier = createNotifier(url);
  const dns = opts.dns ?? tableResolver();
  const keys = sealer(opts.secretKey ?? 'test-secret-key');
  const core = { config, db, clock, sealer: keys, notifier, dns };
  const services = createServices(core);
  const app = await buildApp(core, services);
  const log = opts.logger ?? pino({ level: 'silent' });
  const worker = opts.worker
    ? await startWorker(
        pool,
        {
          send_email: createDelivery({
            db,
            clock,
            sealer: core.sealer,
            smtpUrl: config.smtpUrl,
            from: config.mailFrom,
            log,
          }),
          sweep: () => services.timeRules.runDue(clock.now()),
        },
        log,
      )
    : undefined;

  async function request(
    method: string,
    path: string,
    o: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let payload: string | undefined;
    if (o.raw !== undefined) payload = o.raw;
    else if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await app.inject({ method: method as 'GET', url: path, headers, payload });
    let json: any = null;
    try {
      json = res.body ? JSON.parse(res.body) : null;
    } catch {
      /* not JSON */
    }
    return { status: res.statusCode, json, text: res.body, headers: res.headers };
  }

  return {
    app: app as App,
    db,
    pool,
    clock,
    config,
    services,
    core,
    url,
    dns,
    request,
    get: (p: string, o?: Parameters<typeof request>[2]) => request('GET', p, o),
    post: (p: string, o?: Parameters<typeof request>[2]) => request('POST', p, o),
    patch: (p: string, o?: Parameters<typeof request>[2]) => request('PATCH', p, o),
    put: (p: string, o?: Parameters<typeof request>[2]) => request('PUT', p, o),
    del: (p: string, o?: Parameters<typeof request>[2]) => request('DELETE', p, o),
    async close() {
      await app.close();
      await worker?.stop();
      await notifier.close();
      await db.destroy();
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof testApp>>;

/** Serves `t` on a real socket (for clients that are processes, or need a connection): its URL. */
export async function listenOn(t: TestApp) {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as import('node:net').AddressInfo;
  return `http://127.0.0.1:${port}`;
}
