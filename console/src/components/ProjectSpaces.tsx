// A project's spaces, each with its frames (name, status, address) and the way to its page, and
// for admins the form for a new space. Deleting a space is in the page's danger zone.
import { Link } from 'react-router';
import { atLeast, fp, type Schemas, useWrite } from '../api.ts';
import type { Frame } from '../data/frames.ts';
import { useProjectFrames, useSpaces } from '../data/projects.ts';
import { FrameRow } from './FrameRow.tsx';
import { Field, formValues, Problem, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';

type Project = Schemas['Project'];
type Space = Schemas['Space'];

function SpaceFrames({
  project,
  space,
  frames,
}: {
  project: Project;
  space: Space;
  frames: Frame[];
}) {
  const page = `/console/projects/${project.id}/spaces/${space.id}`;
  return (
    <div className="space">
      <h3>
        <Link to={page}>{space.name}</Link>
      </h3>
      {frames.length === 0 ? (
        <p className="muted">
          No frame yet. {atLeast(project.role, 'admin') && <Link to={page}>Create one</Link>}
        </p>
      ) : (
        <Table head={['Frame', 'Status', 'Address']} stacked>
          {frames.map((f) => (
            <FrameRow key={f.id} frame={f} />
          ))}
        </Table>
      )}
    </div>
  );
}

export function ProjectSpaces({ project }: { project: Project }) {
  const project_id = project.id;
  const spaces = useSpaces(project_id);
  const frames = useProjectFrames(project_id);
  const create = useWrite(
    (name: string) =>
      fp().call(
        fp().api.POST('/v2/projects/{project_id}/spaces', {
          params: { path: { project_id } },
          body: { name },
        }),
      ),
    [['project', project_id, 'spaces']],
  );
  const manage = atLeast(project.role, 'admin');
  return (
    <section aria-labelledby="spaces-title">
      <h2 id="spaces-title">Spaces and frames</h2>
      <Problem error={frames.error} />
      <Loaded query={spaces}>
        {(list) =>
          list.map((s) => (
            <SpaceFrames
              key={s.id}
              project={project}
              space={s}
              frames={(frames.data ?? []).filter((f) => f.space_id === s.id)}
            />
          ))
        }
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
