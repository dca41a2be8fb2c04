// The home page's two overviews: the caller's frames across projects (name, status, URL), and
// the newest entries of the audit logs the caller administers.
import { Link } from 'react-router';
import type { Schemas } from '../api.ts';
import { type Activity, useActivity, useAllFrames } from '../data/dashboard.ts';
import { useOrgs, useTeams } from '../data/groups.ts';
import { FrameRow } from './FrameRow.tsx';
import { Problem } from './Form.tsx';
import { Table } from './Table.tsx';

type Project = Schemas['Project'];

export function FramesOverview({ projects }: { projects: Project[] }) {
  const { frames, pending, error } = useAllFrames(projects);
  return (
    <section aria-labelledby="frames-title">
      <h2 id="frames-title">Your frames</h2>
      <Problem error={error} />
      {pending && frames.length === 0 ? (
        <p className="muted">Loading…</p>
      ) : frames.length === 0 ? (
        <p className="muted">
          No frame yet. Open a space of{' '}
          <Link to={`/console/projects/${projects[0]?.id}`}>{projects[0]?.name}</Link> to create
          one.
        </p>
      ) : (
        <Table head={['Frame', 'Project', 'Status', 'Address']} stacked>
          {frames.map(({ frame: f, project: p }) => (
            <FrameRow key={f.id} frame={f}>
              <td data-label="Project">
                <Link to={`/console/projects/${p.id}`}>{p.name}</Link>
              </td>
            </FrameRow>
          ))}
        </Table>
      )}
    </section>
  );
}

/** "frame.env_changed" → "frame env changed": the action as words. */
const words = (action: string) => action.replace(/[._]/g, ' ');

const when = (iso: string) =>
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function ActivityFeed({ projects, me }: { projects: Project[]; me?: string }) {
  const teams = useTeams().data ?? [];
  const orgs = useOrgs().data ?? [];
  const activity = useActivity(projects, { teams, orgs });
  if (!activity.readable) return null;
  const who = (e: Activity) =>
    e.actor_id === null ? 'the service' : e.actor_id === me ? 'you' : 'someone else';
  return (
    <section aria-labelledby="activity-title">
      <h2 id="activity-title">Recent activity</h2>
      <p className="muted">In the projects, teams and organizations you administer.</p>
      <Problem error={activity.error} />
      {activity.pending && activity.entries.length === 0 ? (
        <p className="muted">Loading…</p>
      ) : activity.entries.length === 0 ? (
        <p className="muted">Nothing has happened yet.</p>
      ) : (
        <ul className="feed">
          {activity.entries.map((e) => (
            <li key={e.id}>
              <span>
                <strong>{words(e.action)}</strong> in <Link to={e.link}>{e.where}</Link>, by{' '}
                {who(e)}
              </span>
              <time className="muted" dateTime={e.at}>
                {when(e.at)}
              </time>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
