// The load generator's process (bench/load.ts starts it): drives each load it is asked for with
// autocannon, one at a time, and answers what it measured. A process of its own, so that it
// shares neither an event loop nor a heap with the service or the stack's limit.
import autocannon from 'autocannon';
import type { LoadResult, LoadSpec } from './load.ts';
import { serve } from './ipc.ts';
import { at } from '../test/helpers/checked.ts';

function run(spec: LoadSpec): Promise<LoadResult> {
  const steps = at(spec.sequences, 0).length;
  let next = 0;
  // Each connection walks one sequence (one caller's requests, in order), then takes the next
  // caller's: autocannon resets `context` when the sequence starts over.
  const requests = Array.from({ length: steps }, (_, k) => ({
    setupRequest(req: autocannon.Request, context: Record<string, number>) {
      if (k === 0) context.caller = next++ % spec.sequences.length;
      const r = at(at(spec.sequences, context.caller ?? 0), k);
      const headers: Record<string, string> = {};
      if (r.token) headers.authorization = `Bearer ${r.token}`;
      if (r.body !== undefined) headers['content-type'] = 'application/json';
      return { ...req, method: r.method, path: r.path, headers, body: r.body };
    },
  }));

  // autocannon's own histogram keeps whole milliseconds; these keep the exact times (2xx only).
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.seconds,
        timeout: 10,
        requests: requests as autocannon.Request[],
      },
      (err, result) => {
        if (err) return reject(err);
        const sorted = Float64Array.from(latencies).sort();
        const quantile = (q: number) =>
          sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
        const total = Object.values(statuses).reduce((s, n) => s + n, 0);
        resolve({
          requests: total,
          seconds: result.duration,
          rps: total / result.duration,
          p50: quantile(0.5),
          p99: quantile(0.99),
          statuses,
          errors: result.errors,
          timeouts: result.timeouts,
          callers: next,
        });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

serve(
  (spec: LoadSpec) => run(spec),
  async () => {},
);
