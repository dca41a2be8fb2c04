// Several rounds of one measurement, folded into one row. The machine is shared and its speed
// drifts by a factor of two within minutes, so an endpoint is measured in rounds alternating
// with the stack's limit, and held to the median of the per-round ratios: each ratio compares two
// runs that saw the same machine.
import type { LoadResult } from './load.ts';
import { at } from '../test/helpers/checked.ts';

export interface Run {
  result: LoadResult;
  queriesPerRequest: number;
  load: number;
  serviceUsPerRequest: number;
  databaseUsPerRequest: number;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? at(s, m) : (at(s, m - 1) + at(s, m)) / 2;
};

/** Medians of the rates and latencies; every answer counted for the failure check; CPU and queries per request over all rounds. */
export function fold(runs: Run[]): Run {
  const requests = runs.reduce((s, r) => s + r.result.requests, 0);
  const perRequest = (pick: (r: Run) => number) =>
    runs.reduce((s, r) => s + pick(r) * r.result.requests, 0) / Math.max(1, requests);
  const statuses: Record<string, number> = {};
  for (const r of runs)
    for (const [k, n] of Object.entries(r.result.statuses)) statuses[k] = (statuses[k] ?? 0) + n;
  return {
    result: {
      requests,
      seconds: runs.reduce((s, r) => s + r.result.seconds, 0),
      statuses,
      rps: median(runs.map((r) => r.result.rps)),
      p50: median(runs.map((r) => r.result.p50)),
      p99: median(runs.map((r) => r.result.p99)),
      errors: runs.reduce((s, r) => s + r.result.errors, 0),
      timeouts: runs.reduce((s, r) => s + r.result.timeouts, 0),
      callers: runs.reduce((s, r) => s + r.result.callers, 0),
    },
    queriesPerRequest: perRequest((r) => r.queriesPerRequest),
    serviceUsPerRequest: perRequest((r) => r.serviceUsPerRequest),
    databaseUsPerRequest: perRequest((r) => r.databaseUsPerRequest),
    load: Math.max(...runs.map((r) => r.load)),
  };
}
