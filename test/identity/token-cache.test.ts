// The token cache (src/identity/token-cache.ts) against a real LISTEN connection: a revocation
// NOTIFYed by another instance drops the entry, and while the connection is lost (here: its
// backend terminated) nothing is cached and what was cached is gone.
import { describe, expect, it } from 'vitest';
import { createTokenCache, type CachedToken } from '../../src/identity/token-cache.ts';
import { listeningForFile } from '../helpers/listening.ts';
import { waitFor } from '../helpers/wait.ts';

const token = (tokenId: string): CachedToken => ({
  userId: 'usr_1',
  tokenId,
  expiresAt: null,
});

const world = listeningForFile();

describe('token cache', () => {
  it('forgets a token revoked elsewhere as soon as the NOTIFY arrives', async () => {
    const cache = createTokenCache(world.notifier);
    cache.set('key-a', token('tok_a'), cache.mark());
    expect(cache.get('key-a')?.userId).toBe('usr_1');
    await world.notify('frameplane_tokens', 'tok_a');
    await waitFor('the revocation', () => cache.get('key-a') === undefined);
  });

  it('caches nothing across a lost LISTEN connection, and drops what it had', async () => {
    const cache = createTokenCache(world.notifier);
    cache.set('key-b', token('tok_b'), cache.mark());
    expect(cache.get('key-b')).toBeDefined();
    const before = cache.mark();

    await world.cut();
    await waitFor('the connection loss', () => !world.notifier.connected());
    expect(cache.get('key-b')).toBeUndefined();
    cache.set('key-c', token('tok_c'), cache.mark());
    expect(cache.get('key-c')).toBeUndefined();

    await waitFor('the reconnection', () => world.notifier.connected());
    // A lookup that began before the gap closed may have read a token revoked in it.
    cache.set('key-d', token('tok_d'), before);
    expect(cache.get('key-d')).toBeUndefined();
    cache.set('key-e', token('tok_e'), cache.mark());
    expect(cache.get('key-e')).toBeDefined();
  });
});
