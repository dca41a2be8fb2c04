// A fresh database with a LISTEN connection (src/db/notifier.ts) and a client to NOTIFY from,
// or to cut that connection with: for what is kept by notifications (caches, revocations).
import { afterAll, beforeAll } from 'vitest';
import pg from 'pg';
import { createNotifier, type Notifier } from '../../src/db/notifier.ts';
import { freshDatabaseUrl } from './database.ts';
import { waitFor } from './wait.ts';

export async function listening() {
  const url = await freshDatabaseUrl();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const notifier: Notifier = createNotifier(url);
  await waitFor('the LISTEN connection', () => notifier.connected());
  return {
    url,
    admin,
    notifier,
    notify: (channel: string, payload: string) =>
      admin.query('select pg_notify($1, $2)', [channel, payload]),
    /** Ends the LISTEN connection's backend, as a failover or a network cut would. */
    cut: () =>
      admin.query(`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and query like 'listen %'`),
    async close() {
      await notifier.close();
      await admin.end();
    },
  };
}

export type Listening = Awaited<ReturnType<typeof listening>>;

/** listening() for the test file that calls it: set up before its tests, closed after. */
export function listeningForFile(): Listening {
  const world = {} as Listening;
  beforeAll(async () => {
    Object.assign(world, await listening());
  });
  afterAll(() => world.close());
  return world;
}
