// Without Docker, `auto` falls back to the process runtime only on an agent that runs no
// stranger's code: the built-in cloud of a service anyone may sign up to refuses frames instead,
// each deployment failing with the reason (src/runner/runtimes/choose.ts, refuse.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { chooseRuntime, STRANGERS_REFUSED } from '../../src/runner/runtimes/choose.ts';
import { runsStrangersCode } from '../../src/cloud/strangers.ts';
import type { BuildReport, DesiredFrame } from '../../src/runner/protocol.ts';
import type { SupervisorDeps } from '../../src/runner/supervisor.ts';

const log = pino({ level: 'silent' });
let saved: string | undefined;
beforeAll(() => {
  saved = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock'; // no Engine answers
});
afterAll(() => {
  if (saved === undefined) delete process.env.DOCKER_HOST;
  else process.env.DOCKER_HOST = saved;
});

const spec = (deployment: string, extra: Partial<DesiredFrame> = {}) =>
  ({
    frame_id: 'frm_1',
    generation: 1,
    desired_state: 'running',
    deployment_id: deployment,
    build_failed: false,
    ...extra,
  }) as DesiredFrame;

describe('the runtime an agent picks without Docker', () => {
  it('is process for an agent of its own people, or when the operator chose it', async () => {
    for (const [choice, strangers] of [
      ['auto', false],
      ['process', true],
    ] as const) {
      const r = await chooseRuntime({ choice, strangers, dataDir: '/tmp/fp-x', hide: [], log });
      expect(r.kind).toBe('process');
    }
  });

  it("refuses strangers' frames: each deployment fails once, with the reason", async () => {
    const r = await chooseRuntime({
      choice: 'auto',
      strangers: true,
      dataDir: '/tmp/fp-x',
      hide: [],
      log,
    });
    expect(r.kind).toBe('none');
    const builds: BuildReport[] = [];
    const lines: string[] = [];
    const deps = {
      build: (b: BuildReport) => builds.push(b),
      line: (_f: string, _r: number, l: string) => lines.push(l),
    } as unknown as SupervisorDeps;
    const frame = r.supervisor('frm_1', deps);
    await frame.update(spec('dpl_1'));
    await frame.update(spec('dpl_1', { generation: 2 }));
    await frame.update(spec('dpl_2', { desired_state: 'stopped' }));
    await frame.update(spec('dpl_3'));
    expect(builds.map((b) => [b.deployment_id, b.state, b.message])).toEqual([
      ['dpl_1', 'failed', STRANGERS_REFUSED],
      ['dpl_3', 'failed', STRANGERS_REFUSED],
    ]);
    expect(lines[0]).toMatch(/no Docker Engine answers/);
  });
});

describe("whether the built-in cloud runs strangers' code", () => {
  it.each([
    ['open', 'http://127.0.0.1:8080', false],
    ['open', 'http://localhost:8080', false],
    ['open', 'http://app.localhost', false],
    ['open', 'http://[::1]:8080', false],
    ['open', 'http://127.9.9.9', false],
    ['open', 'https://frameplane.example', true],
    ['open', 'http://192.168.1.10:8080', true],
    ['open', 'http://0.0.0.0:8080', true],
    ['closed', 'https://frameplane.example', false],
  ] as const)('sign-up %s at %s: %s', (signup, publicUrl, want) => {
    expect(runsStrangersCode({ signup, publicUrl })).toBe(want);
  });
});
