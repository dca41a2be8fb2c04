// The lock that keeps a directory to one process (src/pid-lock.ts): the service's
// DATA_DIR/frameplane.pid, the agent's agent.pid. Only a live holder, the very process recorded
// (pid and start time), keeps it; a file left by a process that is gone is taken over.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeHolder, takePidLock } from '../../src/pid-lock.ts';
import { startTimeOf } from '../../src/runner/processes.ts';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function lockFile() {
  const dir = mkdtempSync(join(tmpdir(), 'frameplane-lock-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'frameplane.pid');
}

const refusal = (h: Parameters<typeof describeHolder>[0]) => `held by ${describeHolder(h)}`;

/** A live process other than this one, once it runs `sleep` (not node's fork before exec). */
async function other() {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  cleanups.push(() => child.kill('SIGKILL'));
  await new Promise((resolve, reject) => child.once('spawn', resolve).once('error', reject));
  return child.pid as number;
}

/** The pid of a process that has exited. */
function gone() {
  return spawnSync('true').pid;
}

describe('the pid lock', async () => {
  it('is taken, refused to another live process with its pid and command, and released', async () => {
    const file = lockFile();
    const release = takePidLock(file, refusal);
    expect(readFileSync(file, 'utf8')).toBe(`${process.pid} ${startTimeOf(process.pid)}\n`);
    release();
    expect(existsSync(file)).toBe(false);

    const pid = await other();
    writeFileSync(file, `${pid} ${startTimeOf(pid)}\n`);
    expect(() => takePidLock(file, refusal)).toThrow(`held by pid ${pid} (sleep 60)`);
    expect(readFileSync(file, 'utf8')).toBe(`${pid} ${startTimeOf(pid)}\n`);
  });

  it('is taken over from a process that is gone, or whose pid another process now has', async () => {
    const file = lockFile();
    writeFileSync(file, `${gone()} 12345\n`);
    takePidLock(file, refusal)();

    const pid = await other();
    writeFileSync(file, `${pid} ${startTimeOf(pid)}0\n`); // the recorded one started earlier
    const release = takePidLock(file, refusal);
    expect(readFileSync(file, 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    release();

    writeFileSync(file, ''); // an agent of an earlier version emptied it on exit
    takePidLock(file, refusal)();
  });

  it('releases only its own hold', async () => {
    const file = lockFile();
    const release = takePidLock(file, refusal);
    const pid = await other();
    writeFileSync(file, `${pid} ${startTimeOf(pid)}\n`); // taken since, by someone else
    release();
    expect(readFileSync(file, 'utf8')).toBe(`${pid} ${startTimeOf(pid)}\n`);
  });
});
