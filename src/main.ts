// Starts Frameplane: the database (embedded unless DATABASE_URL is set), migrations, the HTTP
// API, the job worker and the built-in cloud agent. SIGINT, SIGTERM and SIGHUP drain requests
// and jobs, then exit 0 (src/stop-signals.ts).
import './heap.ts';
import { EventEmitter } from 'node:events';
import type { WorkerEvents } from 'graphile-worker';
import type pg from 'pg';
import { type Config, loadConfig } from './config.ts';
import { SettingError, startFailureLine } from './start-failure.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { connectionsOf, createDatabase, createPgPool } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { discardTestClockOffset, systemClock } from './clock.ts';
import { sealer } from './secrets.ts';
import { secretKey } from './secret-key.ts';
import { createServices } from './services.ts';
import { buildApp } from './app.ts';
import { createLogger, logFormat } from './logger.ts';
import type { Logger } from 'pino';
import { startWorker } from './jobs/worker.ts';
import { createIssuer } from './certificates/acme.ts';
import { createCertificates, queueCertificates } from './certificates/certificates-service.ts';
import { createDelivery } from './mail/deliver.ts';
import { createNotifier } from './db/notifier.ts';
import { startBuiltinAgent } from './cloud/builtin.ts';
import { stoppedLine } from './cloud/frames-on-exit.ts';
import { stopOnSignals } from './stop-signals.ts';
import { consoleBuild } from './web/console-routes.ts';
import { startMetricsListener } from './metrics/metrics-listener.ts';
import type { Metrics } from './metrics/metrics.ts';

/** A start that a setting stops: one line saying which and why, exit 1, no stack. */
function refuse(line: string): never {
  process.stderr.write(`Frameplane did not start: ${line}\n`);
  process.exit(1);
}

function settings(): Config {
  try {
    return loadConfig();
  } catch (err) {
    const line = startFailureLine(err, { port: 0, host: '' });
    if (line) refuse(line);
    throw err;
  }
}

const config = settings();
const log = createLogger(config.logLevel, logFormat(config.logFormat, process.stdout.isTTY));

/** Connections of the job queue's pg pool: its workers, and one for the minute sweep. */
const JOBS_CONCURRENCY = 4;

/**
 * Counts the pool's connections whose socket is still open. pool.end() resolves once it has
 * asked each to close, not once they have: a server stopped right then still finds the
 * sessions and terminates them, and each logs an error on its way out.
 */
function openConnections(pools: Array<pg.Pool | undefined>) {
  let open = 0;
  const idle = new Set<() => void>();
  for (const pool of pools)
    pool?.on('connect', (client) => {
      open++;
      client.once('end', () => {
        if (--open === 0) for (const fn of idle) fn();
      });
    });
  return {
    closed: (ms: number) =>
      new Promise<void>((resolve) => {
        if (open === 0) return resolve();
        const done = () => {
          clearTimeout(timer);
          idle.delete(done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        idle.add(done);
      }),
  };
}

/** The METRICS_PORT listener, when set; a port that cannot be had stops the start. */
async function serveMetrics(config: Config, metrics: Metrics, log: Logger) {
  const port = config.metricsPort;
  if (port === undefined) return undefined;
  return startMetricsListener(metrics, { host: config.host, port }, (err) =>
    log.warn({ err }, 'metrics not served'),
  ).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE' || err.code === 'EACCES')
      throw new SettingError(
        `METRICS_PORT ${port} on ${config.host} cannot be used (${err.code}); set it to a free port`,
      );
    throw err;
  });
}

/** The embedded server once started: a start that fails after it stops it before exiting. */
let embedded: EmbeddedDatabase | undefined;

async function main() {
  let url = config.databaseUrl;
  if (!url) {
    const sharedBuffersMb = config.embeddedSharedBuffersMb;
    const postgresLog = (line: string) => log.debug({ postgres: line });
    embedded = await startEmbeddedPostgres(config.dataDir, postgresLog, { sharedBuffersMb });
    url = embedded.url;
    log.info({ dataDir: config.dataDir }, 'embedded PostgreSQL started');
  }
  // After the embedded database has secured DATA_DIR; a key file that cannot be trusted stops
  // the start before anything is served.
  const key = secretKey({
    secretKey: config.secretKey,
    dataDir: config.dataDir,
    generated: (file) =>
      log.info(
        { file },
        'generated SECRET_KEY; keep this file (or set SECRET_KEY) to read stored secrets',
      ),
  });
  const db = createDatabase(url, {
    max: config.databasePoolSize,
    timeoutMs: config.databaseTimeoutMs,
  });
  const jobsPool = createPgPool(url, JOBS_CONCURRENCY + 2);
  const connections = openConnections([jobsPool, connectionsOf(db)?.pool]);
  const clock = systemClock(db, { testClock: config.testClock });
  const notifier = createNotifier(url, (err) =>
    log.warn({ err: err.message }, 'notification listener reconnecting'),
  );
  // Another instance moved the test clock: follow it.
  notifier.subscribe('frameplane_clock', '*', () => void clock.refresh().catch(() => {}));
  const core = { config, db, clock, sealer: sealer(key), notifier };
  const services = createServices(core);
  const { metrics } = services;
  metrics.watchPool('jobs', jobsPool);
  metrics.onCollectorError((collector, err) =>
    log.warn({ collector, err: (err as Error).message }, 'a metrics read failed'),
  );
  let ready = false;
  const web = consoleBuild(log);
  const app = await buildApp(core, services, { logger: log, isReady: () => ready, console: web });
  await app.listen({ port: config.port, host: config.host });
  const metricsListener = await serveMetrics(config, metrics, log);

  const applied = await migrate(jobsPool);
  if (applied.length) log.info({ applied }, 'migrations applied');
  if (!config.testClock) {
    const dropped = await discardTestClockOffset(db);
    if (dropped)
      log.warn({ offset_ms: dropped }, 'dropped a test-clock offset: TEST_CLOCK is not 1');
  }
  await clock.refresh();
  const deliver = createDelivery({
    db,
    clock,
    sealer: core.sealer,
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    log,
  });
  const certificates = config.acme
    ? createCertificates({
        db,
        clock,
        sealer: core.sealer,
        issuer: createIssuer({ db, sealer: core.sealer, clock, settings: config.acme }),
        appsDomain: config.appsDomain,
        log: log.child({ component: 'certificates' }),
      })
    : undefined;
  const unfollow = certificates?.follow(notifier);
  const jobEvents = new EventEmitter() as WorkerEvents;
  metrics.countJobFailures(jobEvents);
  const worker = await startWorker(
    jobsPool,
    {
      send_email: deliver,
      deliver_notification: services.notificationJobs.deliver,
      async sweep() {
        await services.timeRules.runDue(clock.now());
        if (certificates) await queueCertificates(db);
      },
      ...(certificates
        ? { issue_certificates: async () => void (await certificates.issueDue()) }
        : {}),
    },
    log,
    JOBS_CONCURRENCY,
    jobEvents,
  );
  if (certificates) await queueCertificates(db);
  ready = true;
  // The console is built now (once per change of its sources), not on the first visitor's click.
  void web.get().catch(() => {});
  // The built-in cloud: a reference agent run as a child, so a frame goes Online on one machine.
  const builtin =
    config.cloudAgent === 'builtin'
      ? await startBuiltinAgent({ db, config, log, url: app.listeningOrigin }).catch((err) => {
          log.error({ err }, 'built-in cloud agent not started');
          return undefined;
        })
      : undefined;
  log.info(
    `Frameplane is ready at ${config.publicUrl} (API reference at ${config.publicUrl}/docs)`,
  );

  // The drain: the agent (it stops syncing), HTTP and the metrics listener (in-flight requests
  // finish; long polls and event streams end), the job worker (running jobs finish), then the database, last, so
  // nothing above loses it half-way. The children run in sessions of their own: only this
  // order stops them, whoever signalled whom (docs/operations.md, Stopping).
  stopOnSignals({
    log,
    async drain() {
      await builtin?.stop();
      await Promise.all([app.close(), metricsListener?.close()]);
      unfollow?.();
      await worker.stop();
      await worker.promise.catch(() => {}); // resolves once its connections are released
      await notifier.close();
      await db.destroy();
      await jobsPool.end();
      await connections.closed(5000);
      await embedded?.stop();
      // The last line says what became of the frames: left running, they are unreachable.
      const last = stoppedLine(builtin?.exitReport());
      log[last.level](last.fields, last.msg);
    },
    abandon() {
      builtin?.requestStop();
      embedded?.requestStop();
    },
  });
}

/**
 * Stops the embedded server of a start that failed. Its watchdog would stop it once this
 * process is gone, but a person who fixes the setting and starts again at once would find the
 * data directory still held. Bounded: a server that does not stop in time is left to it.
 */
async function stopEmbedded() {
  const bound = new Promise((r) => setTimeout(r, 10_000).unref());
  await Promise.race([embedded?.stop().catch(() => {}), bound]);
}

main().catch(async (err) => {
  await stopEmbedded();
  const line = startFailureLine(err, config);
  if (line) refuse(line);
  log.fatal({ err }, 'Frameplane failed to start');
  process.exit(1);
});
