// frames metrics (issue 39): a frame's CPU, memory, requests, 5xx and latency over a range, one
// line per point. Times as `frames logs` takes them: RFC 3339, or back from now (15m, 2h, 7d).
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context, group, projectOption } from './context.ts';
import { pathOf } from './frames.ts';
import { timeOf } from './log-filters.ts';
import { table } from './output.ts';
import { frame as findFrame } from './resolve.ts';

interface MetricsOptions {
  project: string;
  since?: string;
  until?: string;
  step?: string;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `300`, `5m` or `1h` as seconds; anything else as NaN, which the service refuses (422). */
export function stepOf(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  return m ? Number(m[1]) * (UNIT_SECONDS[m[2] || 's'] ?? 1) : Number.NaN;
}

/** 1536 as "1.5 KiB": binary units, as memory limits are written. */
export function bytesText(n: number | null): string | null {
  if (n === null) return null;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

const fixed = (n: number, digits: number) => String(Number(n.toFixed(digits)));

/** One point as a table row; `-` where the point has no sample. */
export function pointRow(p: Schemas['MetricsPoint'], step: number) {
  const memory = bytesText(p.memory_bytes);
  const limit = bytesText(p.memory_limit_bytes);
  return {
    time: p.at.replace('T', ' ').slice(0, 16),
    cpu: p.cpu_cores === null ? null : fixed(p.cpu_cores, 3),
    memory: memory === null ? null : limit === null ? memory : `${memory} / ${limit}`,
    'req/s': p.requests ? fixed(p.requests / step, 2) : '0',
    '5xx': p.status['5xx'],
    p95: p.latency_ms ? `${fixed(p.latency_ms.p95, 1)} ms` : null,
  };
}

export function register(program: Command) {
  group(program, 'frames')
    .command('metrics <frame>')
    .description(
      "a frame's CPU, memory, requests per second, 5xx and p95 latency, one line per step " +
        '(UTC; the last hour unless told)',
    )
    .requiredOption(...projectOption)
    .option('--since <time>', 'from: RFC 3339, or back from now (15m, 2h, 7d)')
    .option('--until <time>', 'to (excluded): RFC 3339, or back from now; now unless told')
    .option('--step <step>', 'what a line covers: seconds or 5m, 1h (a multiple of a minute)')
    .action(async (ref: string, opts: MetricsOptions, cmd: Command) => {
      const { fp, show } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const query = {
        ...(opts.since !== undefined ? { since: timeOf(opts.since) } : {}),
        ...(opts.until !== undefined ? { until: timeOf(opts.until) } : {}),
        ...(opts.step !== undefined ? { step: stepOf(opts.step) } : {}),
      };
      const m = await fp.call(
        fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/metrics', {
          params: { path: pathOf(f), query },
        }),
      );
      show(m, (v) =>
        table(
          v.points.map((p) => pointRow(p, v.step)),
          ['time', 'cpu', 'memory', 'req/s', '5xx', 'p95'],
          { '5xx': (c) => (c === '0' ? 'dim' : 'red') },
        ),
      );
    });
}
