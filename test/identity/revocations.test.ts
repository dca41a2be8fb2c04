// The revocation list (src/identity/revocations.ts) against a real LISTEN connection: unknown
// until loaded, kept by NOTIFY, a revocation heard while a load runs is kept whatever that
// load's snapshot says, and a lost connection makes the list unknown until it is loaded again.
import { describe, expect, it } from 'vitest';
import { createRevocations } from '../../src/identity/revocations.ts';
import { listeningForFile } from '../helpers/listening.ts';
import { waitFor } from '../helpers/wait.ts';

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

const world = listeningForFile();

describe('revocation list', () => {
  it('is unknown until loaded, then knows what was loaded and what is notified', async () => {
    const held = heldLoad(['tok_loaded']);
    const list = createRevocations(world.notifier, { load: held.load });
    expect(list.revoked('tok_loaded')).toBeUndefined();
    expect(list.revoked('tok_other')).toBeUndefined();
    held.release();
    await waitFor('the load', () => list.known());
    expect(list.revoked('tok_loaded')).toBe(true);
    expect(list.revoked('tok_other')).toBe(false);
    await world.notify('frameplane_tokens', 'tok_other');
    await waitFor('the NOTIFY', () => list.revoked('tok_other') === true);
  });

  it('keeps a revocation notified while a load runs, which that load may not hold', async () => {
    const held = heldLoad([]);
    const list = createRevocations(world.notifier, { load: held.load });
    await waitFor('the load to start', () => held.calls() === 1);
    // Heard before the load answers: the load's snapshot predates it here. The notifier calls
    // the list and this listener in one turn, so once this one has heard it, so has the list.
    const heard = world.notifier.listen('frameplane_tokens', 'tok_during');
    await world.notify('frameplane_tokens', 'tok_during');
    expect(await heard.next(10_000), 'the NOTIFY of tok_during, within 10 s').toBe(true);
    heard.close();
    held.release();
    await waitFor('the load', () => list.known());
    expect(list.revoked('tok_during')).toBe(true);
  });

  it('is unknown while the connection is lost, and loaded again when it is back', async () => {
    let loads = 0;
    const list = createRevocations(world.notifier, {
      load: async () => {
        loads++;
        return [`tok_load_${loads}`];
      },
    });
    await waitFor('the first load', () => list.known());
    expect(list.revoked('tok_load_1')).toBe(true);

    await world.cut();
    await waitFor('the connection loss', () => !world.notifier.connected());
    expect(list.revoked('tok_load_1')).toBeUndefined();
    list.add('tok_local');
    expect(list.revoked('tok_local')).toBeUndefined();

    await waitFor('the reload', () => world.notifier.connected() && list.known());
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
