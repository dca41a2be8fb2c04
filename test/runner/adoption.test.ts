// An agent adopts the replicas an earlier agent left and later signals their process groups
// (kill -pgid). A recorded pid proves nothing by itself: once the replica is gone the pid is
// reused, possibly by the leader of someone else's group. These tests stand such a stranger
// at the recorded pid and check that it is neither adopted nor signalled unless the start time
// recorded with the pid proves the group is ours.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, ownsGroup, startTimeOf } from '../../src/runner/processes.ts';
import { createProcessRuntime } from '../../src/runner/runtimes/process.ts';
import type { ReplicaRef } from '../../src/runner/runtimes/runtime.ts';
import { stopForeign, type AgentState } from '../../src/runner/state.ts';
import { waitFor } from '../helpers/wait.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A process group of its own, as any other program on the machine may start. */
function stranger(): ChildProcess & { pid: number } {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
  child.unref();
  cleanups.push(() => {
    try {
      process.kill(-(child.pid ?? 0), 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  if (!child.pid) throw new Error('sleep did not start');
  return child as ChildProcess & { pid: number };
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'fp-adopt-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const logFile = join(dir, 'replica.log');
  writeFileSync(logFile, '');
  const runtime = createProcessRuntime({
    framesDir: join(dir, 'frames'),
    volumesDir: join(dir, 'volumes'),
    hide: [],
    sandbox: false,
  });
  const ref = (pid: number, startTime: string | undefined): ReplicaRef => ({
    id: String(pid),
    ...(startTime === undefined ? {} : { startTime }),
    endpoint: { host: '127.0.0.1', port: 1 },
    cursor: `${logFile}:0`,
  });
  return { runtime, ref };
}

/** A fixed time on purpose: a stranger signalled would be gone within it (`sleep` dies at once). */
const unharmedFor200ms = () => new Promise((r) => setTimeout(r, 200));
const untilDead = (pid: number) =>
  waitFor(`process ${pid} to be gone`, () => !isAlive(pid), { timeoutMs: 5000 });

describe('adopting a replica by its recorded pid', () => {
  it('neither adopts nor signals a group recorded without a start time', async () => {
    const { runtime, ref } = setup();
    const other = stranger();
    const adopted = await runtime.adopt(ref(other.pid, undefined), () => {});
    await adopted?.stop(100);
    await unharmedFor200ms();
    expect(isAlive(other.pid)).toBe(true);
    expect(adopted).toBeUndefined();
  });

  it('neither adopts nor signals a pid now held by a process started at another time', async () => {
    const { runtime, ref } = setup();
    const other = stranger();
    const recorded = `${startTimeOf(other.pid)}0`;
    const adopted = await runtime.adopt(ref(other.pid, recorded), () => {});
    await adopted?.stop(100);
    await unharmedFor200ms();
    expect(isAlive(other.pid)).toBe(true);
    expect(adopted).toBeUndefined();
  });

  it('adopts and stops the group it recorded, start time and all', async () => {
    const { runtime, ref } = setup();
    const ours = stranger();
    const adopted = await runtime.adopt(ref(ours.pid, startTimeOf(ours.pid)), () => {});
    expect(adopted).toBeDefined();
    await adopted?.stop(1000);
    await untilDead(ours.pid);
    expect(isAlive(ours.pid)).toBe(false);
  });

  it('a process that does not lead its own group is not a group we own', () => {
    const inOurGroup = spawn('sleep', ['60'], { stdio: 'ignore' });
    cleanups.push(() => inOurGroup.kill('SIGKILL'));
    const pid = inOurGroup.pid ?? 0;
    expect(isAlive(pid, startTimeOf(pid))).toBe(true);
    expect(ownsGroup(pid, startTimeOf(pid))).toBe(false);
  });
});

describe('replicas of an agent of another runtime', () => {
  it('stops a recorded group only when its start time proves it', async () => {
    const unproven = stranger();
    const proven = stranger();
    const replica = (pid: number, startTime?: string) => ({
      index: 0,
      ref: {
        id: String(pid),
        ...(startTime === undefined ? {} : { startTime }),
        endpoint: { host: '127.0.0.1', port: 1 },
        cursor: '/nonexistent:0',
      },
    });
    const state: AgentState = {
      version: 2,
      runtime: 'process',
      frames: {
        frm_1: {
          spec: {} as AgentState['frames'][string]['spec'],
          sets: [
            {
              deployment_id: 'dpl_1',
              generation: 1,
              release: { deploymentId: 'dpl_1', artifact: '/x', command: 'true', commitSha: '' },
              replicas: [replica(unproven.pid), replica(proven.pid, startTimeOf(proven.pid))],
            },
          ],
        },
      },
    };
    stopForeign(state, 'docker');
    // Both would be signalled in the same pass: once the proven one is gone, the other would be.
    await untilDead(proven.pid);
    expect(isAlive(unproven.pid)).toBe(true);
    expect(isAlive(proven.pid)).toBe(false);
  });
});
