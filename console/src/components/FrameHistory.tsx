// A frame's deployments, its events as they happen, and its logs as they are written.
import { fp, useList } from '../api.ts';
import { type FrameEvent, type FrameRef, frameKey, params, type LogLine } from '../data/frames.ts';
import { Problem } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';

const time = (iso: string) => new Date(iso).toLocaleTimeString();

export function Deployments({ frame }: { frame: FrameRef }) {
  // Under the frame's key: every event of the frame reads them again.
  const deployments = useList([...frameKey(frame), 'deployments'], (cursor) =>
    fp().api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/deployments', {
      params: { ...params(frame).params, query: { cursor } },
    }),
  );
  return (
    <section aria-labelledby="deployments-title">
      <h2 id="deployments-title">Deployments</h2>
      <Loaded query={deployments}>
        {(list) => (
          <Table
            head={['Started', 'Trigger', 'Status', 'Branch', 'Commit', 'Why it failed']}
            stacked
          >
            {[...list].reverse().map((d) => (
              <tr key={d.id}>
                <td>{new Date(d.created_at).toLocaleString()}</td>
                <td data-label="Trigger">{d.trigger}</td>
                <td>
                  <span className={`badge status-${d.status}`}>{d.status}</span>
                </td>
                <td data-label="Branch">{d.git_repository_branch}</td>
                {/* The commit the agent built, once it has reported it. */}
                <td data-label="Commit">
                  {d.commit_sha ? (
                    <code title={d.commit_sha}>{d.commit_sha.slice(0, 7)}</code>
                  ) : (
                    '-'
                  )}
                </td>
                {/* Labelled only when there is a reason: stacked, an empty cell shows nothing. */}
                <td data-label={d.failure_reason ? 'Why it failed' : undefined}>
                  {d.failure_reason ? `${d.failure_reason}: ${d.failure_message ?? ''}` : ''}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
    </section>
  );
}

export function Events({ events, error }: { events: FrameEvent[]; error: unknown }) {
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <Problem error={error} />
      {events.length === 0 ? (
        <p className="muted">Events appear here as they happen.</p>
      ) : (
        <ul className="list" id="events" aria-live="polite">
          {events.map((e) => (
            <li key={e.id}>
              {time(e.at)} <strong>{e.type}</strong>
              {e.status ? ` → ${e.status}` : ''}
              {e.status_reason ? ` (${e.status_reason})` : ''}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function Logs({ lines, error }: { lines: LogLine[]; error: unknown }) {
  return (
    <section aria-labelledby="logs-title">
      <h2 id="logs-title">Logs</h2>
      <Problem error={error} />
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region must take focus to scroll by keyboard. */}
      <pre className="logs" id="logs" role="log" tabIndex={0} aria-labelledby="logs-title">
        {lines.length === 0
          ? 'No log line yet.'
          : lines.map((l) => `${time(l.at)} [${l.replica}] ${l.line}`).join('\n')}
      </pre>
    </section>
  );
}
