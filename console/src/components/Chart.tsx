// One time-series chart (uPlot on a canvas) under its heading, as wide as its container: a
// ResizeObserver follows the container, so a phone's 390 px shows it whole. New data goes to the
// same chart (setData); only another set of series makes a new one. To assistive technology it
// is an image with a label, described by one line of its latest values.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { type ChartSeries, chartOptions, latestIndex, timeAt } from './chart-options.ts';
import { type Unit, withUnit } from './units.ts';

export type { ChartSeries };

export interface ChartProps {
  /** The chart's id; its heading's and its summary's are made from it. */
  id: string;
  title: string;
  /** What the chart shows, for a screen reader: "CPU in cores over the last hour". */
  label: string;
  unit: Unit;
  series: ChartSeries[];
  /** Times in seconds, then one array of values (null: none) per series. */
  data: uPlot.AlignedData;
  height?: number;
}

/** The values at the latest time that has one: "At 10:42: used 0.25 cores". */
export function summaryOf(unit: Unit, series: ChartSeries[], data: uPlot.AlignedData) {
  const i = latestIndex(data);
  if (i === null) return 'No value in this range.';
  const values = series.map((s, si) => `${s.label} ${withUnit(unit, data[si + 1]?.[i])}`);
  return `At ${timeAt(data, i)}: ${values.join(', ')}.`;
}

/**
 * A uPlot chart in the returned container's ref, as wide as the container: made again only
 * when `shape` (what `options` depends on besides the width) changes; new data goes to it.
 */
export function usePlot(
  shape: string,
  options: (width: number) => uPlot.Options,
  data: uPlot.AlignedData,
) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef({ options, data });
  latest.current = { options, data };

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new shape is a new chart.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let width = el.clientWidth;
    const u = new uPlot(latest.current.options(width), latest.current.data, el);
    plot.current = u;
    // The container's height follows the legend's; only a new width resizes the chart.
    const resized = new ResizeObserver(() => {
      if (el.clientWidth === width) return;
      width = el.clientWidth;
      u.setSize({ width, height: u.height });
    });
    resized.observe(el);
    return () => {
      resized.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    const u = plot.current;
    if (!u || u.data === data) return;
    u.setData(data);
    // The legend's values again, at the time it shows: the hovered one, else the latest.
    u.setLegend({});
  }, [data]);
  return box;
}

export function Chart({ id, title, label, unit, series, data, height = 180 }: ChartProps) {
  const box = usePlot(
    JSON.stringify([unit, series, height]),
    (width) => chartOptions(unit, series, width, height),
    data,
  );
  return (
    <figure className="chart" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{title}</h3>
      <div
        ref={box}
        className="chart-plot"
        id={id}
        role="img"
        aria-label={label}
        aria-describedby={`${id}-latest`}
      />
      <p className="sr-only" id={`${id}-latest`}>
        {summaryOf(unit, series, data)}
      </p>
    </figure>
  );
}
