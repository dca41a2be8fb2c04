// A fresh, migrated database per test file, cloned from the run's template.
import pg from 'pg';
import { inject } from 'vitest';
import { randomBytes } from 'node:crypto';

export async function freshDatabaseUrl(): Promise<string> {
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  const name = `${inject('pgPrefix')}${randomBytes(4).toString('hex')}`;
  try {
    // The template may be busy for a moment while another file clones it.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`create database ${name} template ${inject('pgTemplate')}`);
        break;
      } catch (err) {
        if (attempt > 50 || !/being accessed by other users/.test((err as Error).message))
          throw err;
        await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(inject('pgAdminUrl'));
  url.pathname = `/${name}`;
  return url.toString();
}
