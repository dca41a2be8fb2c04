// The charts of a frame's metrics, from the API's answer: CPU and memory (each replica too when
// there are several), requests per second by status class, latency percentiles, network. The
// answer has a point per step, null where nothing was sampled: gaps in the lines.
import type uPlot from 'uplot';
import type { FrameMetrics, MetricsPoint } from '../data/metrics.ts';
import type { ChartSeries } from './chart-options.ts';
import type { Unit } from './units.ts';

export interface ChartSpec {
  id: string;
  title: string;
  /** What the values are, in words, for the chart's label. */
  what: string;
  unit: Unit;
  series: ChartSeries[];
  data: uPlot.AlignedData;
}

type Value = number | null;
type ReplicaPoint = FrameMetrics['replicas'][number]['points'][number];

const CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;
const CLASS_COLORS = { '2xx': '--green', '3xx': '--blue', '4xx': '--amber', '5xx': '--red' };
const REPLICA_COLORS = ['--violet', '--teal', '--pink', '--amber', '--green'];

/** Whether anything was ever reported in the range (otherwise the tab says so in words). */
export const hasMetrics = (m: FrameMetrics) =>
  m.points.some(
    (p) =>
      p.cpu_cores !== null ||
      p.memory_bytes !== null ||
      p.net_rx_bytes_per_second !== null ||
      p.requests > 0,
  );

/** One line per replica, on the frame's times, when there are several (one is the total). */
function replicaLines(m: FrameMetrics, pick: (p: ReplicaPoint) => Value) {
  if (m.replicas.length < 2) return { series: [], values: [] };
  return {
    series: m.replicas.map(
      (r, i): ChartSeries => ({
        label: `Replica ${r.replica}`,
        color: REPLICA_COLORS[i % REPLICA_COLORS.length] ?? '--muted',
        thin: true,
      }),
    ),
    values: m.replicas.map((r) => {
      const byTime = new Map(r.points.map((p) => [Date.parse(p.at), pick(p)]));
      return m.points.map((p) => byTime.get(Date.parse(p.at)) ?? null);
    }),
  };
}

export function chartsOf(m: FrameMetrics): ChartSpec[] {
  const x = m.points.map((p) => Date.parse(p.at) / 1000);
  const of = (pick: (p: MetricsPoint) => Value) => m.points.map(pick);
  const total = m.replicas.length > 1 ? 'Total' : 'Used';
  const cpu = replicaLines(m, (p) => p.cpu_cores);
  const memory = replicaLines(m, (p) => p.memory_bytes);
  // The range ends at the service's now, so its last step is still going on: its requests so
  // far over the whole step would draw a drop that is not there. Requests end a step earlier.
  const last = m.points.length - 1;
  return [
    {
      id: 'chart-cpu',
      title: 'CPU',
      what: 'CPU in cores',
      unit: 'cores',
      series: [{ label: total, color: '--blue' }, ...cpu.series],
      data: [x, of((p) => p.cpu_cores), ...cpu.values],
    },
    {
      id: 'chart-memory',
      title: 'Memory',
      what: 'memory used and its limit, in bytes',
      unit: 'bytes',
      series: [
        { label: total, color: '--blue' },
        { label: 'Limit', color: '--red', dashed: true, thin: true },
        ...memory.series,
      ],
      data: [x, of((p) => p.memory_bytes), of((p) => p.memory_limit_bytes), ...memory.values],
    },
    {
      id: 'chart-requests',
      title: 'Requests',
      what: 'requests per second by status class',
      unit: 'req/s',
      series: CLASSES.map((c) => ({ label: c, color: CLASS_COLORS[c] })),
      data: [
        x,
        ...CLASSES.map((c) => m.points.map((p, i) => (i < last ? p.status[c] / m.step : null))),
      ],
    },
    {
      id: 'chart-latency',
      title: 'Latency',
      what: 'the 50th, 95th and 99th percentiles of response time, in milliseconds',
      unit: 'ms',
      series: [
        { label: 'p50', color: '--blue' },
        { label: 'p95', color: '--amber' },
        { label: 'p99', color: '--red' },
      ],
      data: [
        x,
        of((p) => p.latency_ms?.p50 ?? null),
        of((p) => p.latency_ms?.p95 ?? null),
        of((p) => p.latency_ms?.p99 ?? null),
      ],
    },
    {
      id: 'chart-network',
      title: 'Network',
      what: 'bytes received and sent per second',
      unit: 'bytes/s',
      series: [
        { label: 'In', color: '--teal' },
        { label: 'Out', color: '--violet' },
      ],
      data: [x, of((p) => p.net_rx_bytes_per_second), of((p) => p.net_tx_bytes_per_second)],
    },
  ];
}
