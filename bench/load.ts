// Runs loads against the service, or against the stack's limit, from a process of its own
// (bench/load-process.ts), started once and reused: the service keeps its process to itself, as
// it would with its callers on other machines (here they share the machine's two cores).
import { startChild, type Child } from './ipc.ts';

export interface Step {
  method: 'GET' | 'POST';
  /** Omitted: no authorization header. */
  token?: string;
  path: string;
  body?: string;
}

export interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  /** One caller's requests, sent in order on a connection; connections take callers in turn. */
  sequences: Step[][];
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  /** Milliseconds, over the 2xx answers. */
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  /** Sequences started (callers taken), counting a caller taken again after the last. */
  callers: number;
}

export interface LoadGenerator {
  pid: number;
  run(spec: LoadSpec): Promise<LoadResult>;
  stop(): Promise<void>;
}

export function startLoadGenerator(): LoadGenerator {
  const child: Child = startChild(new URL('./load-process.ts', import.meta.url), {});
  return {
    pid: child.pid,
    run: (spec) => child.ask<LoadResult>(spec),
    stop: () => child.stop(),
  };
}

/** True when every answer was a 2xx and nothing failed at the socket. */
export const clean = (r: LoadResult) =>
  r.errors === 0 && r.timeouts === 0 && Object.keys(r.statuses).every((s) => s.startsWith('2'));
