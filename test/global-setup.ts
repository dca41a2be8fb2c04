// One PostgreSQL for the whole run: the server at DATABASE_URL if set, else an embedded one.
// A template database is migrated once; each test file clones it (CREATE DATABASE … TEMPLATE),
// which takes milliseconds and isolates files from each other.
import type { TestProject } from 'vitest/node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { createPgPool } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    pgPrefix: string;
  }
}

export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  let stop = async () => {};
  let dir: string | undefined;
  if (!adminUrl) {
    // startEmbeddedPostgres makes it 0710 root:postgres as root (the server's user passes through).
    dir = mkdtempSync(join(tmpdir(), 'frameplane-test-'));
    const embedded = await startEmbeddedPostgres(dir);
    adminUrl = embedded.url;
    stop = embedded.stop;
  }
  const template = `fp_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  const url = new URL(adminUrl);
  url.pathname = `/${template}`;
  const pool = createPgPool(url.toString(), 2);
  await migrate(pool);
  await pool.end();
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgPrefix', `fp_test_${process.pid}_`);

  return async () => {
    // Drop what this run created on a shared server; the embedded one goes away whole.
    const { rows } = await admin.query(
      `select datname from pg_database where datname like 'fp_test_${process.pid}_%' or datname = $1`,
      [template],
    );
    for (const r of rows)
      await admin.query(`drop database if exists "${r.datname}" with (force)`).catch(() => {});
    await admin.end();
    await stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}
