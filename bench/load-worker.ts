// Runs in a worker thread: drives one load with autocannon and posts back what it measured.
// Its own event loop keeps the load generator off the service's (they share a process).
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './load.ts';
import { at } from '../test/helpers/checked.ts';

const spec = workerData as LoadSpec;
const steps = at(spec.sequences, 0).length;
let next = 0;

// Each connection walks one sequence (one caller's requests, in order), then takes the next
// caller's: autocannon resets `context` when the sequence starts over.
const requests = Array.from({ length: steps }, (_, k) => ({
  setupRequest(req: autocannon.Request, context: Record<string, number>) {
    if (k === 0) context.caller = next++ % spec.sequences.length;
    const r = at(at(spec.sequences, context.caller ?? 0), k);
    const headers: Record<string, string> = { authorization: `Bearer ${r.token}` };
    if (r.body !== undefined) headers['content-type'] = 'application/json';
    return { ...req, method: r.method, path: r.path, headers, body: r.body };
  },
}));

// autocannon's own histogram keeps whole milliseconds; these keep the exact times (2xx only).
const latencies: number[] = [];
const statuses: Record<string, number> = {};
const options = {
  url: spec.url,
  connections: spec.connections,
  duration: spec.seconds,
  timeout: 10,
  requests: requests as autocannon.Request[],
};
const instance = autocannon(options, (err, result) => {
  if (err) throw err;
  const sorted = Float64Array.from(latencies).sort();
  const quantile = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  const total = Object.values(statuses).reduce((s, n) => s + n, 0);
  const answer: LoadResult = {
    requests: total,
    seconds: result.duration,
    rps: total / result.duration,
    p50: quantile(0.5),
    p99: quantile(0.99),
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
  };
  parentPort!.postMessage(answer);
});
instance.on('response', (_client, status, _bytes, ms) => {
  statuses[status] = (statuses[status] ?? 0) + 1;
  if (status >= 200 && status < 300) latencies.push(ms);
});
