// Applies migrations/*.sql in name order, each in its own transaction, and installs the job
// queue's schema. A session-level advisory lock makes this safe when several instances start
// at once: the first migrates, the others wait and then find nothing left to do.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { runMigrations } from 'graphile-worker';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../migrations');
const LOCK_KEY = 7_346_001; // any constant shared by every instance
const UNLIMITED = 2 ** 31 - 1; // the longest timer Node.js keeps: 24 days

export async function migrate(pool: pg.Pool): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    // A migration may rewrite a big table: no statement timeout here (the service sets one per session).
    await client.query('set statement_timeout = 0');
    // Another instance may be migrating: wait for it as long as it takes.
    await client.query({
      text: 'select pg_advisory_lock($1)',
      values: [LOCK_KEY],
      query_timeout: UNLIMITED,
    } as pg.QueryConfig);
    await client.query(`create table if not exists schema_migrations (
      name text primary key, applied_at timestamptz not null default now())`);
    const done = new Set(
      (await client.query('select name from schema_migrations')).rows.map((r) => r.name),
    );
    const files = readdirSync(MIGRATIONS_DIR)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    for (const file of files) {
      if (done.has(file)) continue;
      await client.query('begin');
      try {
        await client.query({
          text: readFileSync(join(MIGRATIONS_DIR, file), 'utf8'),
          query_timeout: UNLIMITED,
        } as pg.QueryConfig);
        await client.query('insert into schema_migrations (name) values ($1)', [file]);
        await client.query('commit');
        applied.push(file);
      } catch (err) {
        await client.query('rollback');
        throw new Error(`migration ${file} failed: ${(err as Error).message}`);
      }
    }
    await runMigrations({ pgPool: pool, logger: quietLogger });
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    await client.query('reset statement_timeout').catch(() => {});
    client.release();
  }
  return applied;
}

import { Logger } from 'graphile-worker';
const quietLogger = new Logger(() => () => {});
