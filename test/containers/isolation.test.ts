// Issue 11, point 3, for the container runtimes: the attacker app, deployed through the real
// service with its defaults (embedded PostgreSQL, the built-in cloud agent), reaches none of the
// service's files, database, processes or the Docker socket, and cannot write outside its own
// directory. The built-in cloud picks docker by itself when an Engine answers.
import { describe, expect, it } from 'vitest';
import { attackFrom } from '../isolation/scenario.ts';
import { breaches } from '../isolation/attacker.ts';

describe('a container keeps an app away from the service', () => {
  it('docker: every attempt of the attacker app fails', { timeout: 300_000 }, async () => {
    const { uid, verdict, logs } = await attackFrom('docker');
    console.log(`[isolation] ${JSON.stringify(verdict)}`);
    expect(Object.keys(verdict).length, logs).toBeGreaterThanOrEqual(12);
    expect(breaches(verdict), JSON.stringify(verdict, null, 1)).toEqual({});
    expect(uid).toBe(1000);
    expect(logs).toMatch(/building frameplane\//);
  });
});

describe('a swarm task keeps an app away from the service', () => {
  it('swarm: every attempt of the attacker app fails', { timeout: 300_000 }, async () => {
    const { uid, verdict, logs } = await attackFrom('swarm');
    console.log(`[isolation] ${JSON.stringify(verdict)}`);
    expect(Object.keys(verdict).length, logs).toBeGreaterThanOrEqual(12);
    expect(breaches(verdict), JSON.stringify(verdict, null, 1)).toEqual({});
    expect(uid).toBe(1000);
  });
});
