// A frame's overview tab: where it answers, the release it serves (commit and when), its latest
// deployment when that is another one, where it runs, its usage now (once it reported any), and
// its most recent events.
import { Link } from 'react-router';
import { fp, useRead } from '../api.ts';
import { type Frame, frameKey, params } from '../data/frames.ts';
import { FrameAddress } from './FrameAddress.tsx';
import { FrameUsage } from './FrameUsage.tsx';
import { EventList, type LiveEvents } from './FrameHistory.tsx';
import { ago, dateTime, reasonText, shortSha } from './words.ts';

const RELEASE =
  '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/deployments/{deployment_id}';

function Commit({ sha }: { sha: string | null }) {
  return sha ? <code title={sha}>{shortSha(sha)}</code> : null;
}

/** The release that serves: its commit, what made it and when it went live. */
function Serving({ frame }: { frame: Frame }) {
  const id = frame.serving?.deployment_id ?? '';
  // Under the frame's key: read again on each of its events.
  const release = useRead(
    [...frameKey(frame), 'deployments', id],
    () =>
      fp().call(
        fp().api.GET(RELEASE, {
          params: { path: { ...params(frame).params.path, deployment_id: id } },
        }),
      ),
    id !== '',
  );
  if (!frame.serving) return <span className="muted">Nothing serves yet.</span>;
  const sha = frame.serving.commit_sha;
  const r = release.data;
  const at = r && (r.finished_at ?? r.created_at);
  return (
    <>
      {sha ? <Commit sha={sha} /> : 'A build of no known commit'}
      {r && (
        <span className="muted">
          {' '}
          ({r.git_repository_branch}) · {r.trigger} ·{' '}
          <time dateTime={at} title={at && dateTime(at)}>
            {at && ago(at)}
          </time>
        </span>
      )}
    </>
  );
}

/** The latest deployment, when it is not the one that serves (in progress, or failed). */
function Latest({ frame }: { frame: Frame }) {
  const d = frame.latest_deployment;
  if (!d || d.id === frame.serving?.deployment_id) return null;
  return (
    <>
      <dt>Latest deployment</dt>
      <dd id="latest-deployment">
        <span className={`badge status-${d.status}`}>{d.status}</span>
        <Commit sha={d.commit_sha} />
        <span className="muted">
          {' '}
          {d.trigger} ·{' '}
          <time dateTime={d.created_at} title={dateTime(d.created_at)}>
            {ago(d.created_at)}
          </time>
        </span>
        {d.failure_reason && (
          <span className="failure" title={d.failure_reason}>
            {reasonText(d.failure_reason, d.failure_message)}
          </span>
        )}
      </dd>
    </>
  );
}

export function FrameOverview({ frame, live }: { frame: Frame; live: LiveEvents }) {
  const runsOn =
    frame.runtime.kind === 'agent'
      ? `A self-hosted agent (${frame.agent_online ? 'online' : 'offline'})`
      : 'The cloud';
  return (
    <>
      <section aria-labelledby="overview-title">
        <h2 id="overview-title">Overview</h2>
        <dl className="facts">
          <dt>URL</dt>
          <dd id="frame-address">
            <FrameAddress frame={frame} why />
          </dd>
          <dt>Serving</dt>
          <dd id="serving">
            <Serving frame={frame} />
          </dd>
          <Latest frame={frame} />
          <dt>Runs on</dt>
          <dd id="runs-on">{runsOn}</dd>
          <dt>Repository</dt>
          <dd>
            <code>
              {frame.git_repository_owner}/{frame.git_repository_name}
            </code>{' '}
            on <code>{frame.git_repository_branch}</code>
          </dd>
          <dt>Replicas</dt>
          <dd>{frame.replica_count}</dd>
          <FrameUsage frame={frame} />
        </dl>
      </section>
      <section aria-labelledby="recent-title">
        <h2 id="recent-title">Recent events</h2>
        <EventList live={live} id="recent-events" limit={5} />
        <p>
          <Link to={{ search: '?tab=logs' }}>All events and logs</Link>
        </p>
      </section>
    </>
  );
}
