// A frame's events (its recent history, then each one as it happens) and its logs as they are
// written. The page holds both streams, so they keep running while another tab is open.
import { useState } from 'react';
import type { FrameEvent, LogFilter, LogLine } from '../data/frames.ts';
import { Problem } from './Form.tsx';
import { eventText, time } from './words.ts';

export interface LiveEvents {
  events: FrameEvent[];
  loaded: boolean;
  error: unknown;
}

/** The newest `limit` events (all when not given), newest first. */
export function EventList({ live, id, limit }: { live: LiveEvents; id: string; limit?: number }) {
  if (!live.loaded && !live.error) return <p className="muted">Loading…</p>;
  const shown = live.events.slice(0, limit);
  return (
    <>
      <Problem error={live.error} />
      {shown.length === 0 ? (
        <p className="muted">No event yet.</p>
      ) : (
        <ul className="events" id={id} aria-live="polite">
          {shown.map((e) => (
            <li key={e.id}>
              <time dateTime={e.at} title={new Date(e.at).toLocaleString()}>
                {time(e.at)}
              </time>{' '}
              <span title={e.type}>{eventText(e)}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

export function Events({ live }: { live: LiveEvents }) {
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <EventList live={live} id="events" />
    </section>
  );
}

const SOURCES = ['app', 'build', 'edge'] as const;

/** The search of the log view: text (sent on Search) and a source (at once). */
function LogSearch({ filter, onFilter }: { filter: LogFilter; onFilter(f: LogFilter): void }) {
  const [q, setQ] = useState(filter.q ?? '');
  return (
    <search className="log-search">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onFilter({ ...filter, q: q.trim() || undefined });
        }}
      >
        <input
          type="search"
          aria-label="Search the logs"
          placeholder="Search the logs"
          maxLength={200}
          value={q}
          onChange={(e) => setQ(e.target.value)}
        />
        <select
          aria-label="Source"
          value={filter.source ?? ''}
          onChange={(e) =>
            onFilter({ ...filter, source: (e.target.value || undefined) as LogFilter['source'] })
          }
        >
          <option value="">All sources</option>
          {SOURCES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <button type="submit">Search</button>
      </form>
    </search>
  );
}

export function Logs({
  lines,
  error,
  filter,
  onFilter,
}: {
  lines: LogLine[];
  error: unknown;
  filter: LogFilter;
  onFilter(f: LogFilter): void;
}) {
  const searching = Boolean(filter.q || filter.source);
  return (
    <section aria-labelledby="logs-title">
      <h2 id="logs-title">Logs</h2>
      <LogSearch filter={filter} onFilter={onFilter} />
      <Problem error={error} />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region must take focus to scroll by keyboard. */}
      <pre className="logs" id="logs" role="log" tabIndex={0} aria-labelledby="logs-title">
        {lines.length === 0
          ? searching
            ? 'No line matches (new ones that do will show here).'
            : 'No log line yet.'
          : lines.map((l) => `${time(l.at)} ${l.source}[${l.replica}] ${l.line}`).join('\n')}
      </pre>
    </section>
  );
}
