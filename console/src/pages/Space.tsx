// A space's frames with their status, and (for admins) a form to create one, in the cloud or on
// one of the project's self-hosted agents. The list follows its frames live, on one connection
// (the project's event stream for this space).
import { Link, useNavigate, useParams } from 'react-router';
import { atLeast, fp, useMe, useList, useWrite, type Schemas } from '../api.ts';
import { Field, formValues, Problem, RenameForm, Select, Submit } from '../components/Form.tsx';
import { FrameAddress } from '../components/FrameAddress.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { useLiveSpace } from '../data/frames.ts';
import { useAgents } from '../data/agents.ts';
import { useProject, useSpace } from '../data/projects.ts';
import { BackLink } from '../components/BackLink.tsx';
import { Table } from '../components/Table.tsx';

type CreateFrame = Schemas['CreateFrameBody'];

function NewFrame({ project_id, space_id }: { project_id: string; space_id: string }) {
  const navigate = useNavigate();
  const me = useMe();
  const agents = useAgents(project_id, true);
  const create = useWrite(
    (body: CreateFrame) =>
      fp().call(
        fp().api.POST('/v2/projects/{project_id}/spaces/{space_id}/frames', {
          params: { path: { project_id, space_id } },
          body,
        }),
      ),
    [['space', space_id, 'frames']],
  );
  const runtimes: Array<[string, string]> = [
    ['', 'Frameplane cloud'],
    ...(agents.data ?? []).map((a): [string, string] => [a.id, `Agent ${a.name}`]),
  ];
  const fields = ['name', 'git_repository_owner', 'git_repository', 'git_repository_branch'];
  return (
    <section aria-labelledby="new-frame">
      <h2 id="new-frame">New frame</h2>
      <form
        className="row"
        onSubmit={(e) => {
          const v = formValues(e);
          const body: CreateFrame = {
            name: v.name ?? '',
            owner_id: me.data?.id ?? '',
            git_repository_owner: v.git_repository_owner ?? '',
            git_repository: v.git_repository ?? '',
            git_repository_branch: v.git_repository_branch ?? '',
            port: Number(v.port),
            replica_count: Number(v.replica_count),
            ...(v.agent_id ? { agent_id: v.agent_id } : {}),
          };
          create.mutate(body, {
            onSuccess: (f) =>
              navigate(`/console/projects/${project_id}/spaces/${space_id}/frames/${f.id}`),
          });
        }}
      >
        <Field label="Name" name="name" required error={create.error} />
        <Field label="Git owner" name="git_repository_owner" required error={create.error} />
        <Field label="Repository" name="git_repository" required error={create.error} />
        <Field
          label="Branch"
          name="git_repository_branch"
          required
          defaultValue="main"
          error={create.error}
        />
        <Field
          label="Port"
          name="port"
          type="number"
          required
          defaultValue={8080}
          hint="its PORT, in its container"
          error={create.error}
        />
        <Field
          label="Replicas"
          name="replica_count"
          type="number"
          min={1}
          defaultValue={1}
          error={create.error}
        />
        <Select label="Runs on" name="agent_id" options={runtimes} error={create.error} />
        <Submit busy={create.isPending}>Create frame</Submit>
      </form>
      <Problem error={create.error} fields={[...fields, 'port', 'replica_count', 'agent_id']} />
    </section>
  );
}

export function SpacePage() {
  const { projectId = '', spaceId = '' } = useParams();
  const project = useProject(projectId);
  const space = useSpace(projectId, spaceId);
  const listKey = ['space', spaceId, 'frames'];
  const frames = useList(listKey, (cursor) =>
    fp().api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames', {
      params: { path: { project_id: projectId, space_id: spaceId }, query: { cursor } },
    }),
  );
  // Every event of a frame of this space reads the list again: statuses stay current.
  const live = useLiveSpace(projectId, spaceId, listKey);
  return (
    <>
      <BackLink to={`/console/projects/${projectId}`} name={project.data?.name} />
      <h1>{space.data?.name ?? 'Space'}</h1>
      <section aria-labelledby="frames-title">
        <h2 id="frames-title">Frames</h2>
        <Problem error={live} />
        <Loaded query={frames}>
          {(list) =>
            list.length === 0 ? (
              <p className="muted">No frame in this space yet.</p>
            ) : (
              <Table head={['Frame', 'Address', 'Status', 'Repository', 'Replicas']} stacked>
                {list.map((f) => (
                  <tr key={f.id}>
                    <td>
                      <Link to={`/console/projects/${projectId}/spaces/${spaceId}/frames/${f.id}`}>
                        {f.name}
                      </Link>
                    </td>
                    <td>
                      <FrameAddress frame={f} />
                    </td>
                    <td>
                      <span className={`badge status-${f.status}`}>{f.status}</span>
                    </td>
                    <td data-label="Repository">
                      {f.git_repository_owner}/{f.git_repository}@{f.git_repository_branch}
                    </td>
                    <td data-label="Replicas">{f.replica_count}</td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
      {atLeast(project.data?.role, 'admin') && (
        <>
          <NewFrame project_id={projectId} space_id={spaceId} />
          <RenameSpace project_id={projectId} space_id={spaceId} name={space.data?.name} />
        </>
      )}
    </>
  );
}

function RenameSpace(p: { project_id: string; space_id: string; name?: string }) {
  const { project_id, space_id } = p;
  const rename = useWrite(
    (name: string) =>
      fp().call(
        fp().api.PATCH('/v2/projects/{project_id}/spaces/{space_id}', {
          params: { path: { project_id, space_id } },
          body: { name },
        }),
      ),
    [
      ['space', space_id],
      ['project', project_id, 'spaces'],
    ],
  );
  return (
    <section aria-labelledby="space-settings">
      <h2 id="space-settings">Settings</h2>
      <RenameForm label="Space name" button="Rename space" name={p.name} rename={rename} />
    </section>
  );
}
