// One project: who owns it (the caller, a person or an org), its spaces with their frames, who
// it is shared with (grants to teams, changed and revoked by its owner), and the way to "who
// has access and why". Admins manage spaces, agents and notifications, the owner shares and
// deletes; a viewer sees everything read-only. What cannot be undone is last, in the danger zone.
import { Link, useParams } from 'react-router';
import { atLeast, fp, type Schemas, useWrite } from '../api.ts';
import { Agents } from '../components/Agents.tsx';
import { RenameForm } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { OrgLink } from '../components/OrgLink.tsx';
import { PROJECTS, useAccess, useProject } from '../data/projects.ts';
import { ProjectDangerZone } from '../components/ProjectDangerZone.tsx';
import { ProjectNotifications } from '../components/ProjectNotifications.tsx';
import { ProjectSharing } from '../components/ProjectSharing.tsx';
import { ProjectSpaces } from '../components/ProjectSpaces.tsx';

type Project = Schemas['Project'];
function Settings({ project }: { project: Project }) {
  const project_id = project.id;
  const rename = useWrite(
    (name: string) =>
      fp().call(
        fp().api.PATCH('/v2/projects/{project_id}', {
          params: { path: { project_id } },
          body: { name },
        }),
      ),
    [['project', project_id], PROJECTS],
  );
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <RenameForm label="Project name" button="Rename" name={project.name} rename={rename} />
    </section>
  );
}

/** Who owns the project: the caller, a person (by name), or an org (its page's link). */
function OwnedBy({ project }: { project: Project }) {
  const access = useAccess(project.id).data;
  const owner = !access ? (
    '…'
  ) : access.org ? (
    <>
      the organization <OrgLink id={access.org.id} name={access.org.name} />
    </>
  ) : project.role === 'owner' ? (
    'you'
  ) : (
    access.owner.name || access.owner.email
  );
  return (
    <>
      Owned by <span id="project-owner">{owner}</span>
    </>
  );
}

export function ProjectPage() {
  const { projectId = '' } = useParams();
  const project = useProject(projectId);
  return (
    <Loaded query={project}>
      {(p) => (
        <>
          <h1>{p.name}</h1>
          <p className="muted">
            <OwnedBy project={p} /> · you are <strong id="my-role">{p.role}</strong> ·{' '}
            <Link to={`/console/projects/${p.id}/access`}>Who has access and why</Link>
          </p>
          <ProjectSpaces project={p} />
          <ProjectSharing project={p} />
          {atLeast(p.role, 'admin') && <Agents project_id={p.id} />}
          {atLeast(p.role, 'admin') && <ProjectNotifications project_id={p.id} />}
          {atLeast(p.role, 'admin') && <Settings project={p} />}
          {atLeast(p.role, 'admin') && <ProjectDangerZone project={p} />}
        </>
      )}
    </Loaded>
  );
}
