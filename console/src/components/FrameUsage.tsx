// The overview's glance at a frame's usage: its CPU and memory now, each with a sparkline of
// the last hour, and a link to the Metrics tab. Nothing before its first report. The same read
// as the Metrics tab's last hour (one cache entry), refreshed as it is.
import { useMemo } from 'react';
import { Link } from 'react-router';
import type uPlot from 'uplot';
import type { Frame } from '../data/frames.ts';
import { RANGES, type Range, useFrameMetrics } from '../data/metrics.ts';
import { usePlot } from './Chart.tsx';
import { latestIndex, sparklineOptions } from './chart-options.ts';
import { type ChartSpec, chartsOf, hasMetrics } from './metrics-charts.ts';
import { withUnit } from './units.ts';

const HOUR = RANGES[0] as Range;

/** The spec's own lines (the total, the limit), without its replicas'. */
function own(spec: ChartSpec) {
  const series = spec.series.filter((s) => !s.label.startsWith('Replica '));
  return { series, data: spec.data.slice(0, series.length + 1) as uPlot.AlignedData };
}

function Sparkline({ spec, id }: { spec: ChartSpec; id: string }) {
  const { series, data } = useMemo(() => own(spec), [spec]);
  const box = usePlot(JSON.stringify(series), (w) => sparklineOptions(series, w, 28), data);
  const i = latestIndex(data);
  const [used, limit] = data.slice(1).map((ys) => (i === null ? null : ys[i]));
  const now = `${withUnit(spec.unit, used)}${limit ? ` of ${withUnit(spec.unit, limit)}` : ''}`;
  return (
    <span className="spark">
      <span id={id}>
        {spec.title} {now}
      </span>
      <span
        ref={box}
        className="spark-plot"
        role="img"
        aria-label={`${spec.title} over the last hour`}
      />
    </span>
  );
}

export function FrameUsage({ frame }: { frame: Frame }) {
  const metrics = useFrameMetrics(frame, HOUR);
  const m = metrics.data?.metrics;
  const charts = useMemo(() => (m && hasMetrics(m) ? chartsOf(m) : []), [m]);
  const [cpu, memory] = charts;
  if (!cpu || !memory) return null;
  return (
    <>
      <dt>Usage</dt>
      <dd className="usage">
        <Sparkline spec={cpu} id="usage-cpu" />
        <Sparkline spec={memory} id="usage-memory" />
        <Link to={{ search: '?tab=metrics' }}>Metrics</Link>
      </dd>
    </>
  );
}
