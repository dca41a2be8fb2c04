// The hostile repository (hostile.ts) deployed black-box through the real service with its
// defaults, on one runtime: a frame per attack beside an honest frame, the git host a plain
// directory (where git would hard-link its files into a checkout). What every runtime must show:
// the host's victim file neither written nor read into a plan, the git host's files untouched,
// every attack either refused with its reason or running harmlessly, and the honest frame
// serving throughout, deployed again after the attacks to show the agent still works.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { gitFixture } from '../runner/fixture.ts';
import { http } from '../faults/helpers/service.ts';
import { ATTACKS, hostileRepo, type Hostile } from './hostile.ts';
import { withService, type Runtime } from './scenario.ts';

/** What each attack must come to, by runtime: a refusal's reason, or `runs` (harmless). */
const OUTCOMES: Record<string, { process: RegExp | 'runs'; container: RegExp | 'runs' }> = {
  [ATTACKS.dockerfileLink]: { process: 'runs', container: /Dockerfile is a symbolic link/ },
  [ATTACKS.procfileLink]: {
    process: /Procfile is a symbolic link/,
    container: /Procfile is a symbolic link/,
  },
  [ATTACKS.packageLink]: {
    process: /package\.json is a symbolic link/,
    container: /package\.json is a symbolic link/,
  },
  [ATTACKS.markerLink]: { process: 'runs', container: 'runs' },
  [ATTACKS.fifoMaker]: { process: 'runs', container: 'runs' },
};

/** Owner, mode and links of every file of the git host: a hard link or a chown would show. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => {
    const st = statSync(join(e.parentPath, e.name));
    return `${join(e.parentPath, e.name)} ${st.uid}:${st.gid} ${st.mode.toString(8)} ${st.nlink}`;
  });
}

export async function hostileFrom(runtime: Runtime, env: Record<string, string> = {}) {
  let hostile: Hostile | undefined;
  let gitDir = '';
  const repos = (root: string) => {
    hostile = hostileRepo(root);
    gitFixture(root).pushApp('honest');
    gitDir = join(root, 'git');
    return gitDir; // a plain directory, not file://
  };
  await withService(runtime, repos, env, async ({ tenant }) => {
    if (!hostile) throw new Error('no hostile repository');
    const before = snapshot(gitDir);
    const honest = await tenant.frame('honest', 'app');
    expect((await tenant.settled(honest)).status).toBe('Online');
    const kind = runtime === 'process' ? 'process' : 'container';
    const attacks = await Promise.all(
      Object.keys(OUTCOMES).map(async (branch) => ({
        branch,
        frame: await tenant.frame(branch, 'hostile', branch),
      })),
    );
    for (const { branch, frame } of attacks) {
      const want = OUTCOMES[branch]?.[kind];
      const f = await tenant.settled(frame);
      if (want === 'runs') expect(f.status, `${branch}: ${JSON.stringify(f)}`).toBe('Online');
      else
        expect(f.latest_deployment, branch).toMatchObject({
          status: 'failed',
          failure_reason: 'build_failed',
          failure_message: expect.stringMatching(want as RegExp),
        });
    }
    expect(hostile.victimHarm()).toEqual({ created: [], secretChanged: false });
    expect(snapshot(gitDir)).toEqual(before);
    expect(await tenant.get(honest)).toMatchObject({ status: 200 });
    // The agent still does its work for everyone: the honest frame deploys again.
    const again = await http(tenant.base, 'POST', `${honest.path}/deploy`, {
      token: tenant.token,
      body: {},
    });
    expect(again.status).toBe(202);
    const after = await tenant.settled(honest);
    expect(after).toMatchObject({ status: 'Online', latest_deployment: { id: again.json.id } });
  });
}
