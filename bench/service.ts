// The processes the bench measures: the service (bench/service-process.ts) and the stack's limit
// (bench/limit-process.ts), each a child process of the bench, on the same database server.
import { closeSync, openSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { buildServer } from '../scripts/server-build.mjs';
import { sealer } from '../src/secrets.ts';
import { loadConfig } from '../src/config.ts';
import { threadCpu } from './cpu.ts';
import { startChild } from './ipc.ts';

export const BENCH_SECRET_KEY = 'frameplane-bench-secret-key';
export const benchSealer = () => sealer(BENCH_SECRET_KEY);

export interface Measured {
  url: string;
  pid: number;
  /** Statements sent to PostgreSQL so far (BEGIN and COMMIT included): round trips. */
  queries(): Promise<number>;
  /** The process's memory (process.memoryUsage()), in bytes. */
  memory(): Promise<NodeJS.MemoryUsage>;
  /** µs of CPU its main thread (the event loop) has spent. */
  cpu(): number;
  /** With BENCH_PROFILE=<dir>, a CPU profile of the process during `work`. */
  profiled<T>(name: string, work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

async function start(
  file: URL,
  env: Record<string, string>,
  stdout: number | 'inherit',
  nodeFlags: string[] = [],
) {
  const child = startChild(file, env, stdout, nodeFlags);
  const url = await child.ask<string>({ type: 'url' });
  const measured: Measured = {
    url,
    pid: child.pid,
    queries: () => child.ask<number>({ type: 'queries' }),
    memory: () => child.ask<NodeJS.MemoryUsage>({ type: 'memory' }),
    cpu: () => threadCpu(child.pid),
    async profiled(name, work) {
      const dir = process.env.BENCH_PROFILE;
      if (!dir) return work();
      await child.ask({ type: 'profile-start' });
      try {
        return await work();
      } finally {
        await child.ask({ type: 'profile-stop', dir, name });
      }
    },
    close: () => child.stop(),
  };
  return measured;
}

/**
 * The service process runs bundled, as `npm start` runs the service (scripts/start.mjs); with
 * BENCH_PROFILE, from its sources through tsx, so that its profiles name our files.
 */
let bundle: Promise<string> | undefined;
async function serviceBundle() {
  if (process.env.BENCH_PROFILE) return new URL('./service-process.ts', import.meta.url);
  bundle ??= buildServer('bench/service-process.ts', 'bench-service');
  return pathToFileURL(await bundle);
}

/** The Node.js flags `npm start` gives the service (package.json): the bench runs it alike. */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return (pkg.scripts.start as string).split(/\s+/).filter((w) => w.startsWith('--'));
}

/**
 * The service, at its default log level (`info`: a line per request) unless `logLevel` says
 * otherwise; its log is thrown away unless BENCH_SERVICE_LOG names a file to append it to.
 */
export async function startService(
  databaseUrl: string,
  logLevel?: string,
  env: Record<string, string> = {},
): Promise<Measured> {
  const fd = openSync(process.env.BENCH_SERVICE_LOG ?? '/dev/null', 'a');
  try {
    return await start(
      await serviceBundle(),
      { ...env, DATABASE_URL: databaseUrl, ...(logLevel ? { BENCH_LOG_LEVEL: logLevel } : {}) },
      fd,
      startFlags(),
    );
  } finally {
    closeSync(fd); // the child holds its own copy
  }
}

/** The stack's limit, with as many database connections as the service's pool. */
export function startLimit(databaseUrl: string): Promise<Measured> {
  const poolSize = loadConfig({ DATABASE_URL: databaseUrl }).databasePoolSize;
  return start(
    new URL('./limit-process.ts', import.meta.url),
    { DATABASE_URL: databaseUrl, POOL_SIZE: String(poolSize) },
    'inherit',
  );
}
