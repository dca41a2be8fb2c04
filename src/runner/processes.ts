// Process facts the agent relies on. A pid alone is not an identity: pids are reused (pid_max is
// often 32768), so an adopted pid must also have the start time we recorded. A zombie (dead,
// not yet reaped, which happens to orphans when PID 1 does not reap) counts as dead.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

interface ProcStat {
  state: string;
  /** The process group it belongs to. */
  pgrp: string;
  startTime: string;
}

function procStat(pid: number): ProcStat | undefined | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // no such process
    return undefined; // no /proc here (not Linux): unknown
  }
  // "pid (comm) state ppid pgrp session …": comm may hold spaces and parentheses, so split
  // after the last ')'. Field 22 of proc(5), the start time, is the 20th after comm.
  const [state, , pgrp, ...rest] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const startTime = rest[16];
  if (state === undefined || pgrp === undefined || startTime === undefined) return undefined;
  return { state, pgrp, startTime };
}

/** The kernel's start time of a process (clock ticks since boot), where /proc exists. */
export function startTimeOf(pid: number): string | undefined {
  return procStat(pid)?.startTime;
}

/** True if `pid` runs and, when known, is the process that started at `startTime`. */
export function isAlive(pid: number, startTime?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  const stat = procStat(pid);
  if (stat === null) return false;
  if (stat)
    return stat.state !== 'Z' && stat.state !== 'X' && (!startTime || stat.startTime === startTime);
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True only if the process group `pid` is provably the one we recorded: its leader `pid` is
 * the process that started at `startTime` (a pid is reused once its process is gone, and the
 * new holder may lead a group of its own, someone else's) and it still leads its group. A
 * zombie leader counts: its pid, hence its group id, cannot be reused until it is reaped.
 * Without a recorded start time, or without /proc, nothing proves it: false, and the group
 * is left alone rather than risking a signal to a stranger's processes.
 */
export function ownsGroup(pid: number, startTime: string | undefined): boolean {
  if (!startTime || !Number.isInteger(pid) || pid <= 1) return false;
  const stat = procStat(pid);
  return (
    stat !== null &&
    stat !== undefined &&
    stat.state !== 'X' &&
    stat.startTime === startTime &&
    stat.pgrp === String(pid)
  );
}

/**
 * Signals a whole process group (a replica is spawned detached, so it leads its own). Only for
 * a group known to be ours: a child of this process, or one that ownsGroup() vouches for.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Signals the group `pid` leads if ownsGroup() proves it is the one recorded. */
export function signalOwnGroup(
  pid: number,
  startTime: string | undefined,
  signal: NodeJS.Signals,
): boolean {
  return ownsGroup(pid, startTime) && signalGroup(pid, signal);
}

/** A port that is free right now on the loopback interface, chosen by the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
