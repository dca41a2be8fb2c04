// Issue 11, point 3, for the process runtime (the development one): the attacker app, deployed
// through the real service with its defaults, reaches none of the service's files, database,
// processes or Docker socket, and cannot write outside its own directory.
import { describe, expect, it } from 'vitest';
import { attackFrom } from '../isolation/scenario.ts';
import { breaches } from '../isolation/attacker.ts';

describe('the process runtime keeps an app away from the service', () => {
  it('every attempt of the attacker app fails', { timeout: 300_000 }, async () => {
    const { uid, verdict, logs } = await attackFrom('process');
    console.log(`[isolation] ${JSON.stringify(verdict)}`);
    expect(Object.keys(verdict).length, logs).toBeGreaterThanOrEqual(12);
    expect(breaches(verdict), JSON.stringify(verdict, null, 1)).toEqual({});
    if (process.getuid?.() === 0) expect(uid).not.toBe(0);
  });
});
