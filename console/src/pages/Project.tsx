// One project: who owns it (the caller, a person or an org), its spaces, who it is shared with
// (grants to teams, changed and revoked by its owner), and the way to "who has access and why".
// Admins manage spaces, the owner shares and deletes; a viewer sees everything read-only.
import { Link, useNavigate, useParams } from 'react-router';
import { atLeast, fp, type Schemas, useList, useRead, useWrite } from '../api.ts';
import { Agents } from '../components/Agents.tsx';
import { ConfirmButton } from '../components/Confirm.tsx';
import {
  Field,
  formValues,
  Problem,
  RenameForm,
  RoleForm,
  Select,
  Submit,
} from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { OrgLink } from '../components/OrgLink.tsx';
import { ORG, useTeams } from '../data/groups.ts';
import { PROJECTS, useAccess, useProject } from '../data/projects.ts';
import { Table } from '../components/Table.tsx';

type Project = Schemas['Project'];
type GrantRole = 'viewer' | 'member' | 'admin';
const GRANT_ROLES = ['viewer', 'member', 'admin'] as const;

function Spaces({ project }: { project: Project }) {
  const project_id = project.id;
  const key = ['project', project_id, 'spaces'];
  const spaces = useList(key, (cursor) =>
    fp().api.GET('/v2/projects/{project_id}/spaces', {
      params: { path: { project_id }, query: { cursor } },
    }),
  );
  const create = useWrite(
    (name: string) =>
      fp().call(
        fp().api.POST('/v2/projects/{project_id}/spaces', {
          params: { path: { project_id } },
          body: { name },
        }),
      ),
    [key],
  );
  const remove = useWrite(
    (space_id: string) =>
      fp().call(
        fp().api.DELETE('/v2/projects/{project_id}/spaces/{space_id}', {
          params: { path: { project_id, space_id } },
        }),
      ),
    [key],
  );
  const manage = atLeast(project.role, 'admin');
  return (
    <section aria-labelledby="spaces-title">
      <h2 id="spaces-title">Spaces</h2>
      <Problem error={remove.error} />
      <Loaded query={spaces}>
        {(list) => (
          <ul className="list">
            {list.map((s) => (
              <li key={s.id} className="actions">
                <Link to={`/console/projects/${project_id}/spaces/${s.id}`}>{s.name}</Link>
                {manage && (
                  <ConfirmButton
                    label="Delete"
                    question={`Delete the space ${s.name}?`}
                    busy={remove.isPending}
                    onConfirm={() => remove.mutate(s.id)}
                  />
                )}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      {manage && (
        <form
          className="row"
          onSubmit={(e) => {
            const form = e.currentTarget;
            create.mutate(formValues(e).name ?? '', { onSuccess: () => form.reset() });
          }}
        >
          <Field label="New space" name="name" required maxLength={100} error={create.error} />
          <Submit busy={create.isPending}>Create space</Submit>
        </form>
      )}
      <Problem error={create.error} fields={['name']} />
    </section>
  );
}

function Sharing({ project }: { project: Project }) {
  const project_id = project.id;
  const access = useAccess(project_id);
  const teams = useTeams();
  const refresh = [['project', project_id, 'access']];
  const share = useWrite(
    ({ team_id, role }: { team_id: string; role: GrantRole }) =>
      fp().call(
        fp().api.POST('/v2/teams/{team_id}/grants', {
          params: { path: { team_id } },
          body: { project_id, role },
        }),
      ),
    refresh,
  );
  const change = useWrite(
    ({ team_id, grant_id, role }: { team_id: string; grant_id: string; role: GrantRole }) =>
      fp().call(
        fp().api.PATCH('/v2/teams/{team_id}/grants/{grant_id}', {
          params: { path: { team_id, grant_id } },
          body: { role },
        }),
      ),
    refresh,
  );
  const revoke = useWrite(
    ({ team_id, grant_id }: { team_id: string; grant_id: string }) =>
      fp().call(
        fp().api.DELETE('/v2/teams/{team_id}/grants/{grant_id}', {
          params: { path: { team_id, grant_id } },
        }),
      ),
    refresh,
  );
  // Sharing needs the project's owner (of an org's project: an owner or admin of the org,
  // CONTRACT 3a) and admin of the team; changing (lowering) or revoking a grant needs admin of
  // its team only (raising it also needs the sharer's right: the service says so).
  const orgId = project.owner_kind === 'org' ? project.owner_id : null;
  const org = useRead(['org', orgId], () => ORG.get(orgId ?? ''), orgId !== null);
  const owner = orgId !== null ? atLeast(org.data?.role, 'admin') : project.role === 'owner';
  const adminOf = (teams.data ?? []).filter((t) => atLeast(t.role, 'admin'));
  const manages = (teamId: string) => adminOf.some((t) => t.id === teamId);
  return (
    <section aria-labelledby="sharing-title">
      <h2 id="sharing-title">Shared with teams</h2>
      <Problem error={change.error ?? revoke.error} />
      <Loaded query={access}>
        {(a) =>
          a.grants.length === 0 ? (
            <p className="muted">Not shared with any team.</p>
          ) : (
            <Table
              head={['Team', 'Role']}
              actions={a.grants.some((g) => manages(g.team.id))}
              stacked
            >
              {a.grants.map((g) => {
                const ids = { team_id: g.team.id, grant_id: g.grant_id };
                return (
                  <tr key={g.grant_id}>
                    <td>{g.team.name}</td>
                    <td>
                      {manages(g.team.id) ? (
                        <RoleForm
                          label={`Role of ${g.team.name}`}
                          roles={GRANT_ROLES}
                          role={g.role}
                          busy={change.isPending}
                          change={(role) => change.mutate({ ...ids, role })}
                        />
                      ) : (
                        g.role
                      )}
                    </td>
                    {manages(g.team.id) && (
                      <td>
                        <ConfirmButton
                          label="Revoke"
                          question={`Stop sharing with ${g.team.name}?`}
                          busy={revoke.isPending}
                          onConfirm={() => revoke.mutate(ids)}
                        />
                      </td>
                    )}
                  </tr>
                );
              })}
            </Table>
          )
        }
      </Loaded>
      {owner && adminOf.length > 0 && (
        <form
          className="row"
          onSubmit={(e) => {
            const v = formValues(e);
            share.mutate({ team_id: v.team_id ?? '', role: v.role as GrantRole });
          }}
        >
          <Select
            label="Share with team"
            name="team_id"
            options={adminOf.map((t) => [t.id, t.name] as [string, string])}
            error={share.error}
          />
          <Select
            label="At role"
            name="role"
            options={GRANT_ROLES}
            defaultValue="viewer"
            error={share.error}
          />
          <Submit busy={share.isPending}>Share</Submit>
        </form>
      )}
      <Problem error={share.error} fields={['team_id', 'role']} />
    </section>
  );
}

function Danger({ project }: { project: Project }) {
  const navigate = useNavigate();
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
  const remove = useWrite(
    () =>
      fp().call(fp().api.DELETE('/v2/projects/{project_id}', { params: { path: { project_id } } })),
    [PROJECTS],
  );
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <RenameForm label="Project name" button="Rename" name={project.name} rename={rename} />
      {project.role === 'owner' && (
        <p>
          <ConfirmButton
            label="Delete project"
            question={`Delete ${project.name} and everything in it?`}
            busy={remove.isPending}
            onConfirm={() =>
              remove.mutate(undefined, { onSuccess: () => navigate('/console/projects') })
            }
          />
        </p>
      )}
      <Problem error={remove.error} />
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
          <Spaces project={p} />
          <Sharing project={p} />
          {atLeast(p.role, 'admin') && <Agents project_id={p.id} />}
          {atLeast(p.role, 'admin') && <Danger project={p} />}
        </>
      )}
    </Loaded>
  );
}
