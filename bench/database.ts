// The PostgreSQL the bench runs on: the server at DATABASE_URL, or an embedded one in a temp
// directory. Each dataset gets a fresh database, migrated by the service's own runner.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { createPgPool } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { loadConfig } from '../src/config.ts';
import { at } from '../test/helpers/checked.ts';

export interface BenchServer {
  /** Creates and migrates a fresh database; answers its URL. */
  freshDatabase(suffix: string): Promise<string>;
  version(): Promise<string>;
  /** Drops what this run created, and stops the embedded server. */
  stop(): Promise<void>;
}

export async function startServer(log: (line: string) => void): Promise<BenchServer> {
  let adminUrl = process.env.DATABASE_URL;
  let stopEmbedded = async () => {};
  let dir: string | undefined;
  if (!adminUrl) {
    // startEmbeddedPostgres lets the postgres OS user (as root) pass through it, and no one else.
    dir = mkdtempSync(join(tmpdir(), 'frameplane-bench-'));
    // As `npm start` would size it (src/config.ts), EMBEDDED_SHARED_BUFFERS_MB included.
    const { embeddedSharedBuffersMb } = loadConfig({
      EMBEDDED_SHARED_BUFFERS_MB: process.env.EMBEDDED_SHARED_BUFFERS_MB,
    });
    const embedded = await startEmbeddedPostgres(dir, undefined, {
      sharedBuffersMb: embeddedSharedBuffersMb,
    });
    adminUrl = embedded.url;
    stopEmbedded = embedded.stop;
    log(`embedded PostgreSQL in ${dir}, shared_buffers ${embeddedSharedBuffersMb} MB`);
  } else {
    log('PostgreSQL at DATABASE_URL');
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const prefix = `frameplane_bench_${process.pid}_`;
  const created: string[] = [];

  return {
    async freshDatabase(suffix) {
      const name = `${prefix}${suffix}`;
      await admin.query(`drop database if exists ${name}`);
      await admin.query(`create database ${name}`);
      created.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      const pool = createPgPool(url.toString(), 2);
      try {
        await migrate(pool);
      } finally {
        await pool.end();
      }
      return url.toString();
    },
    async version() {
      const q = `select version() as version, current_setting('shared_buffers') as buffers`;
      const row = at((await admin.query<{ version: string; buffers: string }>(q)).rows, 0);
      return `${row.version}; shared_buffers ${row.buffers}`;
    },
    async stop() {
      // On a shared server, leave nothing behind; the embedded one goes away whole.
      if (!dir)
        for (const name of created)
          await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
      await stopEmbedded();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
