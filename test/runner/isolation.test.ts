// Issue 11, point 3, for the process runtime (the development one): the attacker app, deployed
// through the real service with its defaults, reaches none of the service's files, database,
// processes or Docker socket, and cannot write outside its own directory.
import { describe, it } from 'vitest';
import { attackFrom } from '../isolation/scenario.ts';
import { expectIsolated } from '../isolation/attacker.ts';

describe('the process runtime keeps an app away from the service', () => {
  it('every attempt of the attacker app fails', { timeout: 300_000 }, async () => {
    expectIsolated(await attackFrom('process'), process.getuid?.() === 0 ? 65534 : undefined);
  });
});
