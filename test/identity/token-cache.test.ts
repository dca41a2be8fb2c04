// The token cache (src/identity/token-cache.ts) against a real LISTEN connection: a revocation
// NOTIFYed by another instance drops the entry, and while the connection is lost (here: its
// backend terminated) nothing is cached and what was cached is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createNotifier, type Notifier } from '../../src/db/notifier.ts';
import { createTokenCache, type CachedToken } from '../../src/identity/token-cache.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';

let url: string;
let admin: pg.Client;
let notifier: Notifier;

const token = (tokenId: string): CachedToken => ({
  userId: 'usr_1',
  tokenId,
  expiresAt: null,
});

async function until(check: () => boolean, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
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

describe('token cache', () => {
  it('forgets a token revoked elsewhere as soon as the NOTIFY arrives', async () => {
    const cache = createTokenCache(notifier);
    cache.set('key-a', token('tok_a'), cache.mark());
    expect(cache.get('key-a')?.userId).toBe('usr_1');
    await admin.query(`select pg_notify('frameplane_tokens', 'tok_a')`);
    await until(() => cache.get('key-a') === undefined, 'the revocation');
  });

  it('caches nothing across a lost LISTEN connection, and drops what it had', async () => {
    const cache = createTokenCache(notifier);
    cache.set('key-b', token('tok_b'), cache.mark());
    expect(cache.get('key-b')).toBeDefined();
    const before = cache.mark();

    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and query like 'listen %'`);
    await until(() => !notifier.connected(), 'the connection loss');
    expect(cache.get('key-b')).toBeUndefined();
    cache.set('key-c', token('tok_c'), cache.mark());
    expect(cache.get('key-c')).toBeUndefined();

    await until(() => notifier.connected(), 'the reconnection');
    // A lookup that began before the gap closed may have read a token revoked in it.
    cache.set('key-d', token('tok_d'), before);
    expect(cache.get('key-d')).toBeUndefined();
    cache.set('key-e', token('tok_e'), cache.mark());
    expect(cache.get('key-e')).toBeDefined();
  });
});
