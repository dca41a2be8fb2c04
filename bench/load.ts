// Runs one load against the service from a worker thread (load-worker.ts): the service keeps
// its event loop to itself, as it would with the load generator in another process.
import { Worker } from 'node:worker_threads';

export interface Step {
  method: 'GET' | 'POST';
  token: string;
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
}

const WORKER = new URL('./load-worker.ts', import.meta.url).href;
// Worker threads do not inherit tsx's loader: register it, then import the worker.
const BOOT = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER)}); })`;

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(BOOT, { eval: true, workerData: spec });
    let result: LoadResult | undefined;
    worker.once('message', (m: LoadResult) => {
      result = m;
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', () =>
      result ? resolve(result) : reject(new Error('the load worker exited without a result')),
    );
  });
}

/** True when every answer was a 2xx and nothing failed at the socket. */
export const clean = (r: LoadResult) =>
  r.errors === 0 && r.timeouts === 0 && Object.keys(r.statuses).every((s) => s.startsWith('2'));
