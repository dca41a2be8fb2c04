// Issue 11, point 3, for the container runtimes: the attacker app, deployed through the real
// service with its defaults (embedded PostgreSQL, the built-in cloud agent), reaches none of the
// service's files, database, processes or the Docker socket, and cannot write outside its own
// directory. Without FRAME_RUNTIME, the built-in cloud picks docker by itself when an Engine answers.
import { describe, expect, it } from 'vitest';
import { attackFrom } from '../isolation/scenario.ts';
import { expectIsolated } from '../isolation/attacker.ts';

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
});
