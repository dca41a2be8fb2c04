// Resource limits of the process runtime's replicas and builds, through control groups, where
// the machine lets the agent make them (root, a writable cgroup filesystem): memory without
// swap, CPU time, and a number of processes, as the docker runtime gives each container.
// cgroup v1 (one hierarchy per controller) and v2 (one unified hierarchy) are both handled.
// Each replica gets a group of its own, which the sandbox joins before anything runs in it.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Limits {
  memoryMb: number;
  cpus: number;
  pids: number;
}

export interface Cgroup {
  /** The directories to join: one per v1 controller, or the one v2 group. */
  readonly dirs: string[];
  /** True once the kernel killed something in it for want of memory. */
  oomKilled(): boolean;
  /** Removes the group once empty (its processes gone); false while something still runs. */
  remove(): boolean;
}

const ROOT = '/sys/fs/cgroup';
const PARENT = 'frameplane';
const V1 = ['memory', 'cpu', 'pids'] as const;

export type CgroupSupport = { ok: true; version: 1 | 2 } | { ok: false; why: string };

let support: CgroupSupport | undefined;

/** Whether groups can be made here, and of which version; probed once, by making one. */
export function cgroupSupport(): CgroupSupport {
  support ??= probe();
  return support;
}

function probe(): CgroupSupport {
  if (process.platform !== 'linux') return { ok: false, why: 'not Linux' };
  if (process.getuid?.() !== 0) return { ok: false, why: 'the agent does not run as root' };
  const version = existsSync(join(ROOT, 'cgroup.controllers')) ? 2 : 1;
  if (version === 1 && !V1.every((c) => existsSync(join(ROOT, c, 'cgroup.procs'))))
    return { ok: false, why: `cgroup v1 without the ${V1.join(', ')} controllers` };
  try {
    const g = makeCgroup(`probe-${process.pid}`, { memoryMb: 64, cpus: 1, pids: 16 }, version);
    g.remove();
  } catch (err) {
    return { ok: false, why: `cannot make a cgroup: ${(err as Error).message}` };
  }
  return { ok: true, version };
}

const write = (dir: string, file: string, value: string) => writeFileSync(join(dir, file), value);

/** Makes (or reuses) the group `name` with these limits. Throws where the machine refuses. */
export function makeCgroup(name: string, limits: Limits, version: 1 | 2): Cgroup {
  if (!/^[A-Za-z0-9_.-]{1,200}$/.test(name) || name.startsWith('.'))
    throw new Error(`bad cgroup name "${name}"`);
  const memory = String(limits.memoryMb * 1024 * 1024);
  const period = 100_000;
  const quota = String(Math.max(1000, Math.round(limits.cpus * period)));
  if (version === 2) {
    const parent = join(ROOT, PARENT);
    mkdirSync(parent, { recursive: true });
    // Controllers reach a group only when every ancestor hands them down.
    write(ROOT, 'cgroup.subtree_control', '+memory +cpu +pids');
    write(parent, 'cgroup.subtree_control', '+memory +cpu +pids');
    const [dir] = dirsOf(name, 2) as [string];
    mkdirSync(dir, { recursive: true });
    write(dir, 'memory.max', memory);
    if (existsSync(join(dir, 'memory.swap.max'))) write(dir, 'memory.swap.max', '0');
    write(dir, 'cpu.max', `${quota} ${period}`);
    write(dir, 'pids.max', String(limits.pids));
    return group(name, 2);
  }
  const dirs = dirsOf(name, 1);
  for (const d of dirs) mkdirSync(d, { recursive: true });
  const [mem, cpu, pids] = dirs as [string, string, string];
  write(mem, 'memory.limit_in_bytes', memory);
  // memsw (memory + swap) exists only with swap accounting; equal to the limit, it means no swap.
  if (existsSync(join(mem, 'memory.memsw.limit_in_bytes')))
    write(mem, 'memory.memsw.limit_in_bytes', memory);
  write(cpu, 'cpu.cfs_period_us', String(period));
  write(cpu, 'cpu.cfs_quota_us', quota);
  write(pids, 'pids.max', String(limits.pids));
  return group(name, 1);
}

const dirsOf = (name: string, version: 1 | 2) =>
  version === 2 ? [join(ROOT, PARENT, name)] : V1.map((c) => join(ROOT, c, PARENT, name));

/** A `key value` line of a cgroup file, as a number (0 when absent). */
function counter(file: string, key: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${key} `));
    return Number(line?.split(' ')[1] ?? 0) || 0;
  } catch {
    return 0;
  }
}

function group(name: string, version: 1 | 2): Cgroup {
  const dirs = dirsOf(name, version);
  // v1 counts kills in memory.oom_control (kernel 4.13 and later), v2 in memory.events.
  const oomFile =
    version === 2
      ? join(ROOT, PARENT, name, 'memory.events')
      : join(ROOT, 'memory', PARENT, name, 'memory.oom_control');
  return {
    dirs,
    oomKilled: () => counter(oomFile, 'oom_kill') > 0,
    remove() {
      let all = true;
      for (const d of dirs) {
        try {
          rmdirSync(d); // a group is removed with rmdir, and only once empty
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') all = false;
        }
      }
      return all;
    },
  };
}

/** The group of an earlier agent's replica, if it still exists. */
export function findCgroup(name: string, version: 1 | 2): Cgroup | undefined {
  return dirsOf(name, version).every((d) => existsSync(d)) ? group(name, version) : undefined;
}

/**
 * Removes a group once its last process is gone: at once when it is empty already, else
 * retried for a while (the kernel reaps a killed process group a moment after its leader).
 */
export function disposeCgroup(g: Cgroup | undefined, tries = 60) {
  if (!g || g.remove() || tries <= 0) return;
  setTimeout(() => disposeCgroup(g, tries - 1), 500).unref();
}
