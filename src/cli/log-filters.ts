// The filters of `frames logs` (issue 39): --grep, --since, --until, --replica, --source, as the
// query of GET …/logs and its download. A time is RFC 3339, or a duration back from now
// (`30s`, `15m`, `2h`, `7d`) like `kubectl logs --since`; anything else goes to the service
// as written, whose 422 says what it expects.
import { Option } from 'commander';
import type { Schemas } from '../sdk/index.ts';

export interface LogFilterOptions {
  grep?: string;
  since?: string;
  until?: string;
  replica?: string;
  source?: Schemas['LogLine']['source'];
}

export const logFilterOptions = () => [
  new Option('-q, --grep <text>', 'only lines containing text, ignoring case (taken literally)'),
  new Option('--since <time>', 'only lines at or after: RFC 3339, or back from now (15m, 2h, 7d)'),
  new Option('--until <time>', 'only lines before: RFC 3339, or back from now'),
  new Option('--replica <n>', "only this replica's lines"),
  new Option('--source <source>', 'only lines from').choices(['app', 'build', 'edge']),
];

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `2h` as the time two hours ago (RFC 3339); any other text unchanged. */
export function timeOf(text: string, now = Date.now()): string {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) return text;
  return new Date(now - Number(m[1]) * (UNIT_SECONDS[m[2] as string] ?? 1) * 1000).toISOString();
}

/** The query the options make; a --replica that is no number is sent as NaN, which is a 422. */
export function logQuery(o: LogFilterOptions) {
  return {
    ...(o.grep !== undefined ? { q: o.grep } : {}),
    ...(o.since !== undefined ? { since: timeOf(o.since) } : {}),
    ...(o.until !== undefined ? { until: timeOf(o.until) } : {}),
    ...(o.replica !== undefined ? { replica: Number(o.replica) } : {}),
    ...(o.source !== undefined ? { source: o.source } : {}),
  };
}
