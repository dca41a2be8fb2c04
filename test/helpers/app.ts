// Builds the real application on a fresh database for one test file. Requests go through
// Fastify's HTTP layer (inject), against real PostgreSQL; nothing is mocked.
import type { Logger } from 'pino';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.ts';
import { createDatabase, createPgPool } from '../../src/db/database.ts';
import { systemClock } from '../../src/clock.ts';
import { sealer } from '../../src/secrets.ts';
import { createServices } from '../../src/services.ts';
import { buildApp, type App } from '../../src/app.ts';
import { startWorker } from '../../src/jobs/worker.ts';
import { createDelivery } from '../../src/mail/deliver.ts';
import { freshDatabaseUrl } from './database.ts';
import { type Channel, createNotifier, type Notifier } from '../../src/db/notifier.ts';
import type { Follow } from '../../src/history/history-follow.ts';
import type { EventStream } from '../../src/http/sse.ts';
import { sql } from 'kysely';
import { tableResolver, type TableResolver } from './dns.ts';
import { waitFor } from './wait.ts';

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

/**
 * Counts, per channel and key, the waits holding on the notifier: a long poll (?wait) or a GET
 * ?wait_for holds once it has read what it would answer and waits in `next()` for a wake-up.
 * A test that wants to see such a wait woken makes its change once the wait holds.
 */
function countHolds(notifier: Notifier) {
  const holding = new Map<string, number>();
  const listen = notifier.listen.bind(notifier);
  notifier.listen = (channel, key) => {
    const listening = listen(channel, key);
    const k = `${channel}:${key}`;
    return {
      async next(ms, signal) {
        holding.set(k, (holding.get(k) ?? 0) + 1);
        try {
          return await listening.next(ms, signal);
        } finally {
          holding.set(k, (holding.get(k) ?? 1) - 1);
        }
      },
      close: () => listening.close(),
    };
  };
  return (channel: Channel, key: string) => holding.get(`${channel}:${key}`) ?? 0;
}

/**
 * Counts the event streams that follow: those whose start position is read (a row committed
 * after it is sent; one committed before it is not, as it was not live). The follow
 * (src/history/history-follow.ts) reads its start, then pumps: every pump sends what it read,
 * waits for the socket (`drained()`, called after every batch, an empty one too) or closes.
 */
function countFollows(services: ReturnType<typeof createServices>) {
  let following = 0;
  const counted = (follow: Follow): Follow => ({
    run(stream, onError) {
      let pumped = false;
      const pump = () => {
        if (!pumped) following++;
        pumped = true;
      };
      const watched: EventStream = {
        send(event, data, id) {
          pump();
          return stream.send(event, data, id);
        },
        drained() {
          pump();
          return stream.drained();
        },
        close() {
          pump();
          stream.close();
        },
        get closed() {
          return stream.closed;
        },
        onClose: (fn) => stream.onClose(fn),
      };
      follow.run(watched, onError);
    },
  });
  const { history, projectEvents } = services;
  const [logs, events, project] = [
    history.followLogs,
    history.followEvents,
    projectEvents.followEvents,
  ];
  history.followLogs = async (...a) => counted(await logs(...a));
  history.followEvents = async (...a) => counted(await events(...a));
  projectEvents.followEvents = async (...a) => counted(await project(...a));
  return () => following;
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
  const db = createDatabase(url, { max: 10 });
  // The job queue's own, as in src/main.ts; only made when the test runs the worker.
  const pool = opts.worker ? createPgPool(url, 6) : undefined;
  const clock = systemClock(db, { testClock: config.testClock });
  await clock.refresh();
  const notifier = createNotifier(url);
  const holding = countHolds(notifier);
  const dns = opts.dns ?? tableResolver();
  const keys = sealer(opts.secretKey ?? 'test-secret-key');
  const core = { config, db, clock, sealer: keys, notifier, dns };
  const services = createServices(core);
  const following = countFollows(services);
  const app = await buildApp(core, services);
  let barriers = 0;
  const log = opts.logger ?? pino({ level: 'silent' });
  const worker = pool
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
          deliver_notification: services.notificationJobs.deliver,
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
    /** How many waits hold now on `channel` for `key` (a long poll: the agent's id). */
    holding,
    /** Waits until a long poll or a GET ?wait_for holds on `channel` for `key`. */
    untilHolding: (channel: Channel, key: string, what = `a wait on ${channel} ${key}`) =>
      waitFor(`${what} to hold`, () => holding(channel, key) > 0),
    /** How many event streams have read their start position so far, since the app began. */
    following,
    /**
     * Waits until every wake-up sent so far has been heard here: the waker's queue is sent,
     * then a NOTIFY of the test's own, heard after every notification committed before it.
     */
    async settled() {
      await services.waker.flush();
      const key = `test-barrier-${++barriers}`;
      const heard = notifier.listen('frameplane_agent', key);
      try {
        await sql`select pg_notify('frameplane_agent', ${key})`.execute(db);
        if (!(await heard.next(10_000))) throw new Error(`${key} was not heard within 10 s`);
      } finally {
        heard.close();
      }
    },
    async close() {
      await app.close();
      await worker?.stop();
      await notifier.close();
      await db.destroy();
      await pool?.end();
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
