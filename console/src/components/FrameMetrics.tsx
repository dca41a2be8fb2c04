// A frame's Metrics tab: a range (the last hour by default, up to 30 days), then its charts,
// read again every 30 s while the tab is open. Before its first report, words say why there is
// nothing to draw.
import { useMemo, useState } from 'react';
import type { Frame } from '../data/frames.ts';
import { RANGES, type Range, useFrameMetrics } from '../data/metrics.ts';
import { Chart } from './Chart.tsx';
import { Problem } from './Form.tsx';
import { chartsOf, hasMetrics } from './metrics-charts.ts';

const FIRST = RANGES[0] as Range;

function RangePicker({ range, onPick }: { range: Range; onPick(r: Range): void }) {
  return (
    <fieldset className="range-picker">
      <legend className="sr-only">Time range</legend>
      {RANGES.map((r) => (
        <button
          key={r.id}
          type="button"
          aria-pressed={r.id === range.id}
          title={`The metrics of ${r.words}`}
          onClick={() => onPick(r)}
        >
          {r.title}
        </button>
      ))}
    </fieldset>
  );
}

export function FrameMetrics({ frame }: { frame: Frame }) {
  const [range, setRange] = useState(FIRST);
  const metrics = useFrameMetrics(frame, range);
  const m = metrics.data?.metrics;
  const charts = useMemo(() => (m && hasMetrics(m) ? chartsOf(m) : []), [m]);
  // The range the charts show: the one picked last may still be on its way.
  const shown = metrics.data?.range ?? range;
  return (
    <section aria-labelledby="metrics-title">
      <div className="metrics-head">
        <h2 id="metrics-title">Metrics</h2>
        <RangePicker range={range} onPick={setRange} />
      </div>
      <Problem error={metrics.error} />
      {!m ? (
        metrics.isPending && <p className="muted">Loading…</p>
      ) : charts.length === 0 ? (
        <p className="muted" id="metrics-empty">
          No metrics yet: a running frame reports every 10 s.
        </p>
      ) : (
        <div className="charts" id="metrics-charts" aria-busy={metrics.isPlaceholderData}>
          {charts.map(({ what, ...c }) => (
            <Chart key={c.id} {...c} label={`${capital(what)} over ${shown.words}`} />
          ))}
        </div>
      )}
    </section>
  );
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
