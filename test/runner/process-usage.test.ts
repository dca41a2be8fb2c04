// Issue 39 on the process runtime: what a replica uses, read by the runtime as the metrics
// sampler reads it (RunningReplica.usage): from its cgroup's files where the agent runs as root
// and may make groups (its memory limit too), else from /proc for its process group; in the
// sandbox where the machine allows it, as the agent runs apps by default. A real app
// that allocates and holds 64 MiB shows its memory rise and its CPU time grow; once stopped,
// it has no usage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProcessRuntime, processSandboxSupport } from '../../src/runner/runtimes/process.ts';
import { cgroupSupport } from '../../src/runner/runtimes/cgroups.ts';
import type { ReplicaRuntime, Usage } from '../../src/runner/runtimes/runtime.ts';
import { waitFor } from '../helpers/wait.ts';
import { gitFixture } from './fixture.ts';

const MiB = 2 ** 20;
const LIMIT_MB = 256;
let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let runtime: ReplicaRuntime;

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'fp-process-usage-'));
  repo = gitFixture(tmp);
  const data = join(tmp, 'agent');
  runtime = createProcessRuntime({
    framesDir: join(data, 'frames'),
    volumesDir: join(data, 'volumes'),
    hide: [data],
    sandbox: processSandboxSupport().ok,
    limits: { memoryMb: LIMIT_MB },
  });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a process replica’s usage', () => {
  it('shows a memory-hungry app’s memory rise, and its CPU time', async () => {
    repo.pushFiles(
      {
        'package.json': JSON.stringify({ name: 'hungry', private: true }),
        Procfile: 'web: node hungry.js\n',
        // Once a file says so, 64 MiB more, held, 8 MiB every 100 ms.
        'hungry.js': [
          `const fs = require('fs'); const held = [];`,
          `const t = setInterval(() => { if (!fs.existsSync('grow')) return; clearInterval(t);`,
          `  const more = () => { held.push(Buffer.alloc(8 << 20, 1)); if (held.length < 8) setTimeout(more, 100); };`,
          `  more(); }, 50);`,
          `setInterval(() => {}, 1000);`,
        ].join('\n'),
      },
      'a hungry app',
    );
    const release = await runtime.build({
      frameId: 'frm_hungry',
      deploymentId: 'dpl_hungry',
      signal: new AbortController().signal,
      onLine: () => {},
      onFetched: () => {},
      source: {
        gitBaseUrl: repo.gitBaseUrl,
        owner: 'acme',
        repo: 'app',
        branch: 'main',
        commitSha: null,
      },
    });
    const replica = await runtime.start(
      {
        frameId: 'frm_hungry',
        deploymentId: 'dpl_hungry',
        index: 0,
        release,
        env: {},
        volumes: [],
        port: 8080,
      },
      () => {},
    );
    try {
      // node up: its heap and code in memory.
      const before = await waitFor('node to start', () => replica.usage(), {
        until: (u) => (u?.memoryBytes ?? 0) > 10 * MiB,
        timeoutMs: 20_000,
      });
      if (cgroupSupport().ok) expect(before?.memoryLimitBytes).toBe(LIMIT_MB * MiB);
      writeFileSync(join(release.artifact, 'grow'), '');
      const after = (await waitFor('64 MiB more', () => replica.usage(), {
        until: (u) => (u?.memoryBytes ?? 0) >= (before?.memoryBytes ?? 0) + 60 * MiB,
        timeoutMs: 20_000,
      })) as Usage;
      expect(after.cpuSeconds).toBeGreaterThan(before?.cpuSeconds ?? 0);
      expect(after.memoryBytes).toBeLessThan(LIMIT_MB * MiB);
    } finally {
      await replica.stop(1000);
    }
    expect(await replica.usage()).toBe(undefined);
  });
});
