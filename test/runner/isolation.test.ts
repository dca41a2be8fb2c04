// Issues 11 and 34 for the process runtime (the development one), through the real service
// with its defaults: the attacker app reaches none of the service's files, database, processes
// or Docker socket and cannot write outside its own directory; and a hostile repository never
// turns the agent against its machine (test/isolation/hostile-scenario.ts).
import { describe, expect, it } from 'vitest';
import { attackFrom, withService } from '../isolation/scenario.ts';
import { attackerRepo } from '../isolation/attacker.ts';
import { expectIsolated } from '../isolation/attacker.ts';
import { hostileFrom } from '../isolation/hostile-scenario.ts';
import { FIRST_FRAME_UID } from '../../src/runner/runtimes/frame-uids.ts';

describe('the process runtime keeps an app away from the service', () => {
  it('every attempt of the attacker app fails', { timeout: 300_000 }, async () => {
    // As root, the app runs as its frame's own uid: the first one this agent gave.
    expectIsolated(
      await attackFrom('process'),
      process.getuid?.() === 0 ? FIRST_FRAME_UID : undefined,
    );
  });

  it('a hostile repository harms nothing and stalls no one', { timeout: 400_000 }, async () => {
    await hostileFrom('process');
  });

  it("without Docker, a public service with open sign-up runs no stranger's app", {
    timeout: 120_000,
  }, async () => {
    const env = { PUBLIC_URL: 'https://frameplane.example', DOCKER_HOST: 'unix:///nonexistent' };
    await withService('auto', attackerRepo, env, async ({ tenant }) => {
      const f = await tenant.frame('attacker', 'attacker');
      const settled = await tenant.settled(f, 60_000);
      expect(settled).toMatchObject({
        status: 'Error',
        status_reason: 'build_failed',
        latest_deployment: {
          status: 'failed',
          failure_message: expect.stringMatching(/runs apps only in containers/),
        },
      });
      expect(await tenant.logs(f)).toMatch(/no Docker Engine answers/);
    });
  });
});
