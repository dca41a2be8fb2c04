// Where a request's CPU goes: the measured process's main thread and the PostgreSQL server's processes,
// read from /proc around each measurement. On two shared cores, req/s alone cannot tell a
// heavier query from a heavier response; these figures (µs of CPU per request) can.
import { readFileSync } from 'node:fs';
import pg from 'pg';

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux

/** utime + stime of one task (process or thread) in µs, or undefined when it is not ours to read. */
function taskCpu(path: string): number | undefined {
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return undefined;
  }
}

/** A process's main thread (its event loop), apart from libuv's and V8's helper threads. */
export const threadCpu = (pid: number) => taskCpu(`/proc/${pid}/task/${pid}/stat`) ?? NaN;

export type CpuSnapshot = Map<number, number>;

export interface DatabaseCpu {
  /** CPU of each process of the server (backends, WAL writer, checkpointer…) by pid. */
  snapshot(): Promise<CpuSnapshot>;
  close(): Promise<void>;
}

/** µs of CPU spent between two snapshots; NaN when the server's processes are not on this machine. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): number {
  if (after.size === 0) return NaN;
  let total = 0;
  // A backend that started in between counts from zero; one that ended in between is lost
  // (the pool keeps its connections during a measurement, so none should).
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}

/** Follows the server's processes by the pids PostgreSQL reports for itself. */
export async function databaseCpu(url: string): Promise<DatabaseCpu> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    async snapshot() {
      const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity');
      const out: CpuSnapshot = new Map();
      for (const { pid } of rows) {
        const cpu = taskCpu(`/proc/${pid}/stat`);
        if (cpu !== undefined) out.set(pid, cpu);
      }
      return out;
    },
    close: () => client.end(),
  };
}
