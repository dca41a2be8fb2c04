// Starts Frameplane: the database (embedded unless DATABASE_URL is set), migrations, the HTTP
// API, the job worker and the built-in cloud agent. SIGINT, SIGTERM and SIGHUP drain requests
// and jobs, then exit 0 (src/stop-signals.ts).
import './heap.ts';
import type pg from 'pg';
import { loadConfig } from './config.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { createDatabase, createPool } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { discardTestClockOffset, systemClock } from './clock.ts';
import { sealer } from './secrets.ts';
import { secretKey } from './secret-key.ts';
import { createServices } from './services.ts';
import { buildApp } from './app.ts';
import { createLogger } from './logger.ts';
import { startWorker } from './jobs/worker.ts';
import { createIssuer } from './certificates/acme.ts';
import { createCertificates, queueCertificates } from './certificates/certificates-service.ts';
import { createDelivery } from './mail/deliver.ts';
import { createNotifier } from './db/notifier.ts';
import { startBuiltinAgent } from './cloud/builtin.ts';
import { stoppedLine } from './cloud/frames-on-exit.ts';
import { stopOnSignals } from './stop-signals.ts';
import { consoleBuild } from './web/console-routes.ts';

const config = loadConfig();
const log = createLogger(config.logLevel);

/**
 * Counts the pool's connections whose socket is still open. pool.end() resolves once it has
 * asked each to close, not once they have: a server stopped right then still finds the
 * sessions and terminates them, and each logs an error on its way out.
 */
function openConnections(pool: pg.Pool) {
  let open = 0;
  const idle = new Set<() => void>();
  pool.on('connect', (client) => {
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

async function main() {
  let embedded: EmbeddedDatabase | undefined;
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
  const pool = createPool(url, {
    max: config.databasePoolSize,
    timeoutMs: config.databaseTimeoutMs,
  });
  const db = createDatabase(pool);
  const connections = openConnections(pool);
  const clock = systemClock(db, { testClock: config.testClock });
  const notifier = createNotifier(url, (err) =>
    log.warn({ err: err.message }, 'notification listener reconnecting'),
  );
  // Another instance moved the test clock: follow it.
  notifier.subscribe('frameplane_clock', '*', () => void clock.refresh().catch(() => {}));
  const core = { config, db, clock, sealer: sealer(key), notifier };
  const services = createServices(core);
  let ready = false;
  const web = consoleBuild(log);
  const app = await buildApp(core, services, { logger: log, isReady: () => ready, console: web });
  await app.listen({ port: config.port, host: config.host });

  const applied = await migrate(pool);
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
  const worker = await startWorker(
    pool,
    {
      send_email: deliver,
      async sweep() {
        await services.timeRules.runDue(clock.now());
        if (certificates) await queueCertificates(db);
      },
      ...(certificates
        ? { issue_certificates: async () => void (await certificates.issueDue()) }
        : {}),
    },
    log,
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

  // The drain: the agent (it stops syncing), HTTP (in-flight requests finish; long polls and
  // event streams end), the job worker (running jobs finish), then the database, last, so
  // nothing above loses it half-way. The children run in sessions of their own: only this
  // order stops them, whoever signalled whom (docs/operations.md, Stopping).
  stopOnSignals({
    log,
    async drain() {
      await builtin?.stop();
      await app.close();
      unfollow?.();
      await worker.stop();
      await worker.promise.catch(() => {}); // resolves once its connections are released
      await notifier.close();
      await db.destroy();
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

main().catch((err) => {
  log.fatal({ err }, 'Frameplane failed to start');
  process.exit(1);
});
