// Issue 34, items 5, 8 and 9, on the process runtime as root: each frame runs as a uid of its
// own, within a memory limit (an app past it is reported out of memory), with an npm cache of
// its own; a plain-directory git host is copied, never hard-linked, and never handed over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProcessRuntime } from '../../src/runner/runtimes/process.ts';
import { FIRST_FRAME_UID } from '../../src/runner/runtimes/frame-uids.ts';
import { cgroupSupport } from '../../src/runner/runtimes/cgroups.ts';
import type { BuildRequest, ReplicaRuntime } from '../../src/runner/runtimes/runtime.ts';
import { gitFixture, until } from './fixture.ts';

const root = process.getuid?.() === 0;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let runtime: ReplicaRuntime;
let agentData: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fp-process-limits-'));
  repo = gitFixture(tmp);
  agentData = join(tmp, 'agent');
  runtime = createProcessRuntime({
    framesDir: join(agentData, 'frames'),
    volumesDir: join(agentData, 'volumes'),
    hide: [agentData],
    sandbox: true,
    limits: { memoryMb: 64 },
  });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const request = (frameId: string, deploymentId: string, gitBaseUrl: string): BuildRequest => ({
  frameId,
  deploymentId,
  signal: new AbortController().signal,
  onLine: () => {},
  onFetched: () => {},
  source: { gitBaseUrl, owner: 'acme', repo: 'app', branch: 'main', commitSha: null },
});

const uidOf = (pid: number) =>
  Number(/Uid:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);

/** Every file under a directory, with its owner and number of links. */
function files(dir: string): Array<{ path: string; uid: number; nlink: number }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const st = statSync(join(e.parentPath, e.name));
      return { path: join(e.parentPath, e.name), uid: st.uid, nlink: st.nlink };
    });
}

describe.runIf(root)('the process runtime as root', () => {
  it('gives each frame its uid and npm cache, and never hands over the git host', async () => {
    repo.pushFiles(
      {
        'package.json': JSON.stringify({
          name: 'l',
          private: true,
          scripts: { build: 'touch "$npm_config_cache/mine"', start: 'node server.js' },
        }),
        'server.js': 'setInterval(() => {}, 1000);',
      },
      'with a build step',
    );
    const bare = join(tmp, 'git', 'acme', 'app.git');
    const before = files(bare);
    const plainDir = join(tmp, 'git'); // a directory, not a file:// URL: git would hard-link
    const a = await runtime.build(request('frm_a', 'dpl_a', plainDir));
    const b = await runtime.build(request('frm_b', 'dpl_b', repo.gitBaseUrl));
    expect(files(bare)).toEqual(before);
    expect(files(join(a.artifact, '.git')).every((f) => f.nlink === 1)).toBe(true);
    const cacheA = join(agentData, 'frames', 'frm_a', 'npm-cache');
    const cacheB = join(agentData, 'frames', 'frm_b', 'npm-cache');
    const [ua, ub] = [statSync(cacheA).uid, statSync(cacheB).uid];
    expect(ua).toBeGreaterThanOrEqual(FIRST_FRAME_UID);
    expect(ub).toBeGreaterThanOrEqual(FIRST_FRAME_UID);
    expect(ua).not.toBe(ub);
    expect(statSync(join(cacheA, 'mine')).uid).toBe(ua);
    expect(statSync(join(a.artifact, 'package.json')).uid).toBe(ua);

    const spec = (frameId: string, release: typeof a) => ({
      frameId,
      deploymentId: release.deploymentId,
      index: 0,
      release,
      env: {},
      volumes: [],
      port: 8080,
    });
    const ra = await runtime.start(spec('frm_a', a), () => {});
    const rb = await runtime.start(spec('frm_b', b), () => {});
    try {
      // The app is the `node server.js` whose environment names the frame.
      const appPid = (frameId: string) =>
        until(`the app of ${frameId}`, async () =>
          readdirSync('/proc')
            .filter((n) => /^\d+$/.test(n))
            .map(Number)
            .find((p) => {
              try {
                return (
                  readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('server.js') &&
                  readFileSync(`/proc/${p}/environ`, 'utf8').includes(`FRAME_ID=${frameId}\0`)
                );
              } catch {
                return false;
              }
            }),
        );
      expect(uidOf(await appPid('frm_a'))).toBe(ua);
      expect(uidOf(await appPid('frm_b'))).toBe(ub);
    } finally {
      await ra.stop(1000);
      await rb.stop(1000);
    }
  });

  it.runIf(cgroupSupport().ok)(
    'reports an app past its memory limit as out of memory',
    async () => {
      repo.pushFiles(
        {
          'package.json': JSON.stringify({ name: 'm', private: true }),
          Procfile: 'web: node hog.js\n',
          'hog.js': 'const a = []; setInterval(() => a.push(Buffer.alloc(16 << 20, 1)), 20);',
        },
        'a memory hog',
      );
      const release = await runtime.build(request('frm_hog', 'dpl_hog', repo.gitBaseUrl));
      const replica = await runtime.start(
        {
          frameId: 'frm_hog',
          deploymentId: 'dpl_hog',
          index: 0,
          release,
          env: {},
          volumes: [],
          port: 8080,
        },
        () => {},
      );
      const exit = await Promise.race([
        replica.exit,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('still running')), 30_000),
        ),
      ]);
      expect(exit.oom).toBe(true);
    },
  );
});
