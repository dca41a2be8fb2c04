// The revocation list (src/identity/revocations.ts) against a real LISTEN connection: unknown
// until loaded, kept by NOTIFY, a revocation heard while a load runs is kept whatever that
// load's snapshot says, and a lost connection makes the list unknown until it is loaded again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createNotifier, type Notifier } from '../../src/db/notifier.ts';
import { createRevocations } from '../../src/identity/revocations.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';

let url: string;
let admin: pg.Client;
let notifier: Notifier;

async function until(check: () => boolean, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A load that answers `ids` only when released: to act while it runs. */
function heldLoad(ids: string[]) {
  let release = () => {};
  let calls = 0;
  return {
    load: () => {
      calls++;
      return new Promise<string[]>((resolve) => {
        release = () => resolve(ids);
      });
    },
    release: () => release(),
    calls: () => calls,
  };
}

beforeAll(async () => {
  url = await freshDatabaseUrl();
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  notifier = createNotifier(url);
  await until(() => notifier.connected(), 'the LISTEN connection');
});
afterAll(async () => {
  await notifier.close();
  await admin.end();
});

describe('revocation list', () => {
  it('is unknown until loaded, then knows what was loaded and what is notified', async () => {
    const held = heldLoad(['tok_loaded']);
    const list = createRevocations(notifier, { load: held.load });
    expect(list.revoked('tok_loaded')).toBeUndefined();
    expect(list.revoked('tok_other')).toBeUndefined();
    held.release();
    await until(() => list.known(), 'the load');
    expect(list.revoked('tok_loaded')).toBe(true);
    expect(list.revoked('tok_other')).toBe(false);
    await admin.query(`select pg_notify('frameplane_tokens', 'tok_other')`);
    await until(() => list.revoked('tok_other') === true, 'the NOTIFY');
  });

  it('keeps a revocation notified while a load runs, which that load may not hold', async () => {
    const held = heldLoad([]);
    const list = createRevocations(notifier, { load: held.load });
    await until(() => held.calls() === 1, 'the load to start');
    await admin.query(`select pg_notify('frameplane_tokens', 'tok_during')`);
    // Heard before the load answers: the load's snapshot predates it here.
    await new Promise((r) => setTimeout(r, 200));
    held.release();
    await until(() => list.known(), 'the load');
    expect(list.revoked('tok_during')).toBe(true);
  });

  it('is unknown while the connection is lost, and loaded again when it is back', async () => {
    let loads = 0;
    const list = createRevocations(notifier, {
      load: async () => {
        loads++;
        return [`tok_load_${loads}`];
      },
    });
    await until(() => list.known(), 'the first load');
    expect(list.revoked('tok_load_1')).toBe(true);

    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and query like 'listen %'`);
    await until(() => !notifier.connected(), 'the connection loss');
    expect(list.revoked('tok_load_1')).toBeUndefined();
    list.add('tok_local');
    expect(list.revoked('tok_local')).toBeUndefined();

    await until(() => notifier.connected() && list.known(), 'the reload');
    // What the list holds is the new load's: the first one's went with the connection.
    expect(loads).toBeGreaterThan(1);
    expect(list.revoked(`tok_load_${loads}`)).toBe(true);
    expect(list.revoked('tok_load_1')).toBe(false);
  });

  it('knows nothing without a notifier: every token is looked up', () => {
    const list = createRevocations(undefined, { load: async () => [] });
    expect(list.known()).toBe(false);
    expect(list.revoked('tok_any')).toBeUndefined();
  });
});
