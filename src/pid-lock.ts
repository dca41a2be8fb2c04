// A directory that belongs to one process at a time: a file in it holds the pid and the start
// time of the process that holds it (the agent's DATA_DIR/agent.pid, the service's
// DATA_DIR/frameplane.pid). A pid alone is not an identity, pids are reused, so a holder is
// live only if its start time matches too; a file left by a process that is gone is taken over.
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAlive, startTimeOf } from './runner/processes.ts';

export interface LockHolder {
  pid: number;
  /** Its command line, where /proc shows it. */
  command?: string;
}

function commandOf(pid: number): string | undefined {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return cmd ? cmd.slice(0, 300) : undefined;
  } catch {
    return undefined; // not Linux, or gone meanwhile
  }
}

/** The live process other than this one that holds `file`, if any; `taken`: the file exists. */
export function lockHolder(file: string): { taken: boolean; holder?: LockHolder } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { taken: false };
    throw err;
  }
  const [pid, start] = text.trim().split(' ');
  const n = Number(pid);
  if (n === process.pid || !isAlive(n, start || undefined)) return { taken: true };
  return { taken: true, holder: { pid: n, command: commandOf(n) } };
}

/**
 * Takes `file` for this process, or throws `refusal(holder)` when another live process holds
 * it. Answers the release, which leaves the file alone if someone else has taken it since.
 */
export function takePidLock(file: string, refusal: (holder: LockHolder) => string): () => void {
  const mine = `${process.pid} ${startTimeOf(process.pid) ?? ''}\n`;
  for (;;) {
    const { taken, holder } = lockHolder(file);
    if (holder) throw new Error(refusal(holder));
    try {
      // A new file is created exclusively: of two processes starting at once, one gets EEXIST
      // and looks again, finding the other. A file left by a dead process is overwritten.
      writeFileSync(file, mine, { mode: 0o600, flag: taken ? 'w' : 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return () => {
    try {
      if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
    } catch {
      /* gone */
    }
  };
}

/** "pid 123 (node scripts/start.mjs)", or "pid 123" where /proc does not tell. */
export const describeHolder = (h: LockHolder) =>
  h.command ? `pid ${h.pid} (${h.command})` : `pid ${h.pid}`;
