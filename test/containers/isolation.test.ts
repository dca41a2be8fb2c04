// Issues 11 and 34 for the container runtimes, through the real service with its defaults
// (embedded PostgreSQL, the built-in cloud agent): the attacker app reaches none of the service's
// files, database, processes or the Docker socket, and cannot write outside its own directory;
// and the hostile repository (test/isolation/hostile-scenario.ts) never turns the agent against
// its machine. Without FRAME_RUNTIME, the built-in cloud picks docker by itself when an Engine
// answers. Hostile Dockerfiles: hostile-build.test.ts.
import { describe, expect, it } from 'vitest';
import { attackFrom } from '../isolation/scenario.ts';
import { expectIsolated } from '../isolation/attacker.ts';
import { hostileFrom } from '../isolation/hostile-scenario.ts';

describe('a container keeps an app away from the service', () => {
  it('docker (chosen by auto): every attempt of the attacker app fails', {
    timeout: 300_000,
  }, async () => {
    const r = await attackFrom('auto');
    expectIsolated(r, 1000);
    expect(r.logs).toMatch(/building frameplane\//);
  });

  it('swarm: every attempt of the attacker app fails', { timeout: 300_000 }, async () => {
    expectIsolated(await attackFrom('swarm'), 1000);
  });

  it('docker: a hostile repository harms nothing and stalls no one', {
    timeout: 400_000,
  }, async () => {
    await hostileFrom('auto');
  });

  it('swarm: a hostile repository harms nothing and stalls no one', {
    timeout: 400_000,
  }, async () => {
    await hostileFrom('swarm');
  });
});
