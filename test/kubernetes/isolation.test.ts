// Issues 11, 34 and 40 on the kubernetes runtime, through the real service with its defaults
// (embedded PostgreSQL, the built-in cloud agent with FRAME_RUNTIME=kubernetes on the test
// cluster): the attacker app, a pod, reaches none of the service's files, database, processes
// or the Docker socket, and cannot write outside its own directory; the hostile repository
// never turns the agent against its machine (its builds are the swarm runtime's).
import { describe, it } from 'vitest';
import { attackFrom } from '../isolation/scenario.ts';
import { expectIsolated } from '../isolation/attacker.ts';
import { hostileFrom } from '../isolation/hostile-scenario.ts';

/** Images exist on the node whose Engine built them: the test cluster's only node. */
const ON_THE_NODE = { KUBERNETES_NODE: 'localhost' };

describe('a pod keeps an app away from the service', () => {
  it('kubernetes: every attempt of the attacker app fails', { timeout: 300_000 }, async () => {
    expectIsolated(await attackFrom('kubernetes', ON_THE_NODE), 1000);
  });

  it('kubernetes: a hostile repository harms nothing and stalls no one', {
    timeout: 400_000,
  }, async () => {
    await hostileFrom('kubernetes', ON_THE_NODE);
  });
});
