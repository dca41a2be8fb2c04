// A process replica's usage (the process runtime): from its control group's files where it has
// one (runtimes/cgroups.ts), else from /proc for its process group. cgroup v2: cpu.stat's
// usage_usec, memory.current less inactive file pages, memory.max. cgroup v1: memory.usage_in_bytes
// less total_inactive_file, memory.limit_in_bytes, and cpuacct.usage where cpuacct shares the
// cpu hierarchy (else the CPU time of the group's processes, from /proc). No network counts:
// a sandboxed replica's only interface is its own loopback, which the agent's forwarder shares.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Usage } from '../runtimes/runtime.ts';

/** Linux's USER_HZ (the unit of /proc/<pid>/stat times) and page size on the usual machines. */
const TICKS_PER_SECOND = 100;
const PAGE_BYTES = 4096;
/** cgroup v1 says "no limit" with a huge number (the largest page-aligned long). */
const NO_LIMIT_V1 = 2 ** 62;

const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** A number file's value; undefined when absent or not a number ("max"). */
function num(file: string): number | undefined {
  const text = read(file)?.trim();
  const n = text === undefined || text === '' ? Number.NaN : Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** A `key value` line of a flat-keyed file (cpu.stat, memory.stat). */
export function keyed(text: string | undefined, key: string): number | undefined {
  for (const line of text?.split('\n') ?? []) {
    const [k, v] = line.split(' ');
    if (k === key && v !== undefined) return Number(v);
  }
  return undefined;
}

/** The CPU seconds (user + system, children reaped included) and resident bytes in a
 *  /proc/<pid>/stat line; its process group. */
export function parseProcStat(line: string) {
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const f = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const tick = (i: number) => Number(f[i]) || 0;
  // After the name: state (0), ppid (1), pgrp (2)… utime (11) stime cutime cstime… rss (21).
  return {
    pgrp: tick(2),
    cpuSeconds: (tick(11) + tick(12) + tick(13) + tick(14)) / TICKS_PER_SECOND,
    rssBytes: tick(21) * PAGE_BYTES,
  };
}

/** The processes of the group: its cgroup's members, else every process in `pid`'s group. */
function members(pid: number, procsFile: string | undefined): number[] {
  const listed = procsFile && read(procsFile);
  if (listed) return listed.split('\n').filter(Boolean).map(Number);
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    if (stat && parseProcStat(stat).pgrp === pid) out.push(Number(name));
  }
  return out;
}

function fromProc(pids: number[]): Usage | undefined {
  let cpuSeconds = 0;
  let memoryBytes = 0;
  let seen = 0;
  for (const p of pids) {
    const stat = read(`/proc/${p}/stat`);
    if (!stat) continue; // gone meanwhile
    const s = parseProcStat(stat);
    cpuSeconds += s.cpuSeconds;
    memoryBytes += s.rssBytes;
    seen++;
  }
  return seen > 0 ? { cpuSeconds, memoryBytes } : undefined;
}

/** What the replica led by `pid` used, read from its cgroup `dirs` where given. */
export function processUsage(pid: number, dirs: readonly string[] = []): Usage | undefined {
  const v2 = dirs.length === 1 && existsSync(join(dirs[0] as string, 'memory.current'));
  if (v2) {
    const dir = dirs[0] as string;
    const cpuUsec = keyed(read(join(dir, 'cpu.stat')), 'usage_usec');
    const current = num(join(dir, 'memory.current'));
    const inactive = keyed(read(join(dir, 'memory.stat')), 'inactive_file') ?? 0;
    if (cpuUsec === undefined || current === undefined) return undefined; // gone
    return {
      cpuSeconds: cpuUsec / 1e6,
      memoryBytes: inactive < current ? current - inactive : current,
      ...optional('memoryLimitBytes', num(join(dir, 'memory.max'))),
    };
  }
  const memDir = dirs.find((d) => existsSync(join(d, 'memory.usage_in_bytes')));
  const cpuDir = dirs.find((d) => existsSync(join(d, 'cpuacct.usage')));
  const procs = fromProc(members(pid, memDir && join(memDir, 'cgroup.procs')));
  if (!procs) return undefined;
  const usage: Usage = { ...procs };
  const cpuNs = cpuDir ? num(join(cpuDir, 'cpuacct.usage')) : undefined;
  if (cpuNs !== undefined) usage.cpuSeconds = cpuNs / 1e9;
  if (memDir) {
    const used = num(join(memDir, 'memory.usage_in_bytes'));
    const stat = read(join(memDir, 'memory.stat'));
    const inactive = keyed(stat, 'total_inactive_file') ?? keyed(stat, 'cache') ?? 0;
    if (used !== undefined) usage.memoryBytes = inactive < used ? used - inactive : used;
    const limit = num(join(memDir, 'memory.limit_in_bytes'));
    if (limit !== undefined && limit < NO_LIMIT_V1) usage.memoryLimitBytes = limit;
  }
  return usage;
}

const optional = <K extends string>(k: K, v: number | undefined) =>
  (v === undefined ? {} : { [k]: v }) as Partial<Record<K, number>>;
