// The process runtime's builds: fetched at the branch, the plan's steps run in the sandbox
// (with the host's network, for the npm registry), the release reused once built, and a step
// that fails is a build failure (not a fetch failure) with the step's last lines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProcessRuntime } from '../../src/runner/runtimes/process.ts';
import { BuildError, type BuildRequest } from '../../src/runner/runtimes/runtime.ts';
import { gitFixture } from './fixture.ts';

let tmp: string;
let repo: ReturnType<typeof gitFixture>;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-process-build-'));
  repo = gitFixture(tmp);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const request = (deploymentId: string, lines: string[]): BuildRequest => ({
  frameId: 'frm_build',
  deploymentId,
  signal: new AbortController().signal,
  onLine: (l) => lines.push(l),
  onFetched: () => {},
  source: {
    gitBaseUrl: repo.gitBaseUrl,
    owner: 'acme',
    repo: 'app',
    branch: 'main',
    commitSha: null,
  },
});

describe('process runtime builds', () => {
  it('runs the build steps in the checkout, records the commit, and reuses the release', async () => {
    const sha = repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'b',
          private: true,
          scripts: { build: 'echo built as $(id -u) > built.txt', start: 'node server.js' },
        }),
        'server.js': 'setInterval(() => {}, 1000);',
      },
      'with a build step',
    );
    const agentData = join(tmp, 'agent');
    const runtime = createProcessRuntime({
      framesDir: join(agentData, 'frames'),
      volumesDir: join(agentData, 'volumes'),
      hide: [agentData],
      sandbox: true,
    });
    const lines: string[] = [];
    const release = await runtime.build(request('dep_one', lines));
    expect(release).toMatchObject({
      deploymentId: 'dep_one',
      command: 'npm start',
      commitSha: sha,
    });
    const built = readFileSync(join(release.artifact, 'built.txt'), 'utf8').trim();
    expect(built).toBe(
      process.getuid?.() === 0 ? 'built as 65534' : `built as ${process.getuid?.()}`,
    );
    expect(lines).toContain('[frameplane] npm run build');
    expect(await runtime.reuse('frm_build', release)).toBe(true);
  });

  it('reports a failing step as build_failed with its last lines', async () => {
    repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'b',
          private: true,
          scripts: { build: 'echo nope >&2; exit 3', start: 'node server.js' },
        }),
      },
      'broken',
    );
    const agentData = join(tmp, 'agent2');
    const runtime = createProcessRuntime({
      framesDir: join(agentData, 'frames'),
      volumesDir: join(agentData, 'volumes'),
      hide: [agentData],
      sandbox: true,
    });
    const err = await runtime.build(request('dep_two', [])).catch((e) => e);
    expect(err).toBeInstanceOf(BuildError);
    expect(err.reason).toBe('build_failed');
    expect(err.message).toMatch(/nope/);
    expect(existsSync(join(agentData, 'frames', 'frm_build', 'dep_two'))).toBe(false);
  });
});
