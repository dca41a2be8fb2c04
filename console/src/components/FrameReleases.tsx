// A frame's deployments, which are its releases (issue 36), newest first: what each ran (commit
// and branch), how it ended (a failure's reason in words) and, in one line, what it changed
// against the release before it. Members roll back to an earlier release: its build again,
// nothing built, with the env it ran or with today's. Viewers read the same list; the line
// names env keys only, so that no value shows in a list (members read them on the API).
import { useState } from 'react';
import { fp, type Schemas, useRead, useWrite } from '../api.ts';
import { type Frame, frameKey, params } from '../data/frames.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Problem } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';
import { dateTime, reasonText, shortSha } from './words.ts';

type Release = Schemas['Release'];
const PATH = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/deployments';
// One page: agents keep only the newest builds, so an older release could not be run again.
const SHOWN = 20;

const short = (sha: string | null) => (sha ? shortSha(sha) : '?');

/** What a release changed, in one line: commits, env keys (+ added, ~ changed, − removed),
 *  settings; a rollback, restart or config release names the build it runs. */
function summary(r: Release): string {
  const parts = r.release_of ? [`build of ${r.release_of}`] : [];
  const c = r.changes;
  // Nothing to compare with: the first release (a deployment that never served is none).
  if (!c) return parts[0] ?? (r.status === 'succeeded' ? 'first release' : '');
  if (c.commits) parts.push(`${short(c.commits.from)}→${short(c.commits.to)}`);
  const env = [
    ...c.env.added.map((e) => `+${e.key}`),
    ...c.env.changed.map((e) => `~${e.key}`),
    ...c.env.removed.map((e) => `−${e.key}`),
  ];
  if (env.length) parts.push(`env: ${env.join(' ')}`);
  for (const s of c.settings) parts.push(`${s.field} ${s.from ?? '-'} → ${s.to ?? '-'}`);
  return parts.join(' · ') || 'no change';
}

export function FrameReleases({ frame, canOperate }: { frame: Frame; canOperate: boolean }) {
  // Under the frame's key: every event of the frame, and every write to it, reads them again.
  const releases = useRead([...frameKey(frame), 'releases'], () =>
    fp().call(fp().api.GET(PATH, { params: { ...params(frame).params, query: { limit: SHOWN } } })),
  );
  const [today, setToday] = useState(false);
  const rollback = useWrite(
    ({ id, config }: { id: string; config: 'release' | 'current' }) =>
      fp().call(
        fp().api.POST(`${PATH}/{deployment_id}/rollback`, {
          params: { path: { ...params(frame).params.path, deployment_id: id } },
          body: { config },
        }),
      ),
    [frameKey(frame)],
  );
  const serving = frame.serving?.deployment_id;
  const env = today ? "today's env" : 'the env it ran';
  return (
    <section aria-labelledby="deployments-title">
      <h2 id="deployments-title">Deployments</h2>
      {canOperate && (
        <p>
          <label>
            <input type="checkbox" checked={today} onChange={(e) => setToday(e.target.checked)} />{' '}
            Roll back with today's env (not the one the release ran)
          </label>
        </p>
      )}
      <Problem error={rollback.error} />
      <Loaded query={releases}>
        {(page) => (
          <Table
            head={['When', 'Commit', 'Trigger', 'Status', 'Changes']}
            actions={canOperate}
            stacked
          >
            {page.data.map((r) => (
              <tr key={r.id}>
                <td>{dateTime(r.created_at)}</td>
                <td data-label="Commit">
                  {r.commit_sha ? <code title={r.commit_sha}>{short(r.commit_sha)}</code> : '-'}
                  <span className="muted"> {r.git_repository_branch}</span>
                </td>
                <td data-label="Trigger">{r.trigger}</td>
                <td>
                  <span className={`badge status-${r.status}`}>{r.status}</span>
                  {r.id === serving && (
                    <>
                      {' '}
                      <span className="badge">serving</span>
                    </>
                  )}
                  {r.failure_reason && (
                    <span className="failure" title={r.failure_reason}>
                      {reasonText(r.failure_reason, r.failure_message)}
                    </span>
                  )}
                </td>
                {/* Labelled only when it says something: stacked, an empty cell shows nothing. */}
                <td data-label={summary(r) ? 'Changes' : undefined}>{summary(r)}</td>
                {canOperate && (
                  <td>
                    {/* Only a release that served can serve again; the serving one already does. */}
                    {r.status === 'succeeded' && r.id !== serving && (
                      <ConfirmButton
                        label="Roll back"
                        question={`Roll back to ${short(r.commit_sha)} with ${env}?`}
                        busy={rollback.isPending}
                        onConfirm={() =>
                          rollback.mutate({ id: r.id, config: today ? 'current' : 'release' })
                        }
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
    </section>
  );
}
