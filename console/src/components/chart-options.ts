// uPlot's options for one metrics chart: the console's palette and font, time along x, the
// values from 0 up along y in the chart's unit (its name as the axis label: bytes in the binary
// unit of the step between ticks), gaps where a value is null, and a legend that shows the
// latest values until the pointer picks a time.
import type uPlot from 'uplot';
import { axisUnit, BYTE_STEPS, stamp, tick, type Unit, withUnit } from './units.ts';

export interface ChartSeries {
  label: string;
  /** A colour of the console's palette, by its custom property: '--blue'. */
  color: string;
  dashed?: boolean;
  thin?: boolean;
}

const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';

const has = (v: number | null | undefined) => v !== null && v !== undefined;

/** The palette's colour, read from styles.css (the property's name itself if it is missing). */
const palette = (name: string) =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || name;

/** The last index at which a series has a value: the time the legend shows when not hovered. */
export function latestIndex(data: uPlot.AlignedData): number | null {
  for (let i = data[0].length - 1; i >= 0; i--)
    if (data.slice(1).some((ys) => has(ys[i]))) return i;
  return null;
}

const spanOf = (x: ArrayLike<number>) => (x.length > 1 ? (x[x.length - 1] ?? 0) - (x[0] ?? 0) : 0);

/** A point's time, in the words the legend and the summary use. */
export const timeAt = (data: uPlot.AlignedData, i: number) =>
  stamp(data[0][i] ?? 0, spanOf(data[0]));

/** Indices of values with no neighbour: a line needs two points, so these get a dot. */
function isolated(u: uPlot, si: number, show: boolean) {
  if (show) return null; // uPlot draws every point already
  const ys = u.data[si] ?? [];
  const idxs: number[] = [];
  for (let i = 0; i < ys.length; i++)
    if (has(ys[i]) && !has(ys[i - 1]) && !has(ys[i + 1])) idxs.push(i);
  return idxs.length ? idxs : null;
}

let ruler: CanvasRenderingContext2D | null = null;
/** The y axis as wide as its longest tick label (uPlot's default is a fixed 50 px). */
function axisWidth(_u: uPlot, values: string[] | null) {
  ruler ??= document.createElement('canvas').getContext('2d');
  if (!ruler) return 50;
  ruler.font = FONT;
  const widest = Math.max(0, ...(values ?? []).map((v) => ruler?.measureText(v).width ?? 0));
  return Math.ceil(widest) + 12; // the tick and the gap to it
}

const topOf = (u: uPlot) => u.scales.y?.max ?? 0;

/** Time along x from the first value on (a frame that began reporting lately fills it too). */
function fromFirstValue(u: uPlot, min: number, max: number): uPlot.Range.MinMax {
  const first = u.data[0].findIndex((_, i) => u.data.slice(1).some((ys) => has(ys[i])));
  const from = u.data[0][first] ?? min;
  return from < max ? [from, max] : [max - 60, max];
}

/** A sparkline's: the lines alone, no axes, legend or cursor, from 0 up. */
export function sparklineOptions(series: ChartSeries[], width: number, height: number) {
  const { scales, series: lines } = chartOptions('cores', series, width, height);
  return {
    width,
    height,
    scales: { ...scales, x: { time: true, range: fromFirstValue } },
    series: lines.map((s) => ({ ...s, width: 1.5 })),
    padding: [2, 0, 2, 0],
    legend: { show: false },
    cursor: { show: false },
    axes: [{ show: false }, { show: false }],
  } satisfies uPlot.Options;
}

export function chartOptions(
  unit: Unit,
  series: ChartSeries[],
  width: number,
  height: number,
): uPlot.Options & { series: uPlot.Series[] } {
  const axis = {
    stroke: palette('--muted'),
    font: FONT,
    labelFont: FONT,
    grid: { stroke: palette('--line'), width: 1 },
    ticks: { stroke: palette('--line'), width: 1, size: 4 },
  };
  const at = (u: uPlot, idx: number | null) => idx ?? latestIndex(u.data);
  const colors = series.map((s) => palette(s.color));
  return {
    width,
    height,
    // No zoom by dragging: the refresh every 30 s would undo it.
    cursor: { drag: { x: false, y: false } },
    // The legend's marks filled with their line's colour (uPlot fills them with the area's).
    legend: { markers: { fill: (_u, si) => colors[si - 1] ?? 'transparent' } },
    scales: {
      x: { time: true },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    series: [
      {
        label: 'Time',
        value: (u, _v, _si, idx) => {
          const i = at(u, idx);
          return i === null ? '—' : timeAt(u.data, i);
        },
      },
      ...series.map(
        (s, i): uPlot.Series => ({
          label: s.label,
          stroke: colors[i],
          width: s.thin ? 1 : 2,
          ...(s.dashed ? { dash: [6, 4] } : {}),
          points: { filter: isolated, fill: colors[i] },
          value: (u, _v, si, idx) => {
            const i = at(u, idx);
            return withUnit(unit, i === null ? null : u.data[si]?.[i]);
          },
        }),
      ),
    ],
    axes: [
      { ...axis, space: 60 },
      {
        ...axis,
        // Bytes in the unit of the step between ticks: 500 MiB steps read 0, 500, 1,000 MiB.
        label: (u, _i, incr) => axisUnit(unit, incr || topOf(u)),
        labelSize: 16,
        labelGap: 0,
        size: axisWidth,
        values: (u, splits, _i, _space, incr) => splits.map((v) => tick(unit, v, incr || topOf(u))),
        ...(unit === 'bytes' || unit === 'bytes/s' ? { incrs: BYTE_STEPS } : {}),
      },
    ],
  };
}
