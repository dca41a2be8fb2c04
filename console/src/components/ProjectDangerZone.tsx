// What cannot be undone, last on the project page: deleting a space (admins) or the project
// (its owner), each behind a confirmation.
import { useNavigate } from 'react-router';
import { fp, type Schemas, useWrite } from '../api.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Problem } from './Form.tsx';
import { PROJECTS, useSpaces } from '../data/projects.ts';

type Project = Schemas['Project'];

/** What cannot be undone, last on the page: deleting a space (admins), the project (owner). */
export function ProjectDangerZone({ project }: { project: Project }) {
  const navigate = useNavigate();
  const project_id = project.id;
  const spaces = useSpaces(project_id);
  const removeSpace = useWrite(
    (space_id: string) =>
      fp().call(
        fp().api.DELETE('/v2/projects/{project_id}/spaces/{space_id}', {
          params: { path: { project_id, space_id } },
        }),
      ),
    [
      ['project', project_id, 'spaces'],
      ['project', project_id, 'frames'],
    ],
  );
  const remove = useWrite(
    () =>
      fp().call(fp().api.DELETE('/v2/projects/{project_id}', { params: { path: { project_id } } })),
    [PROJECTS],
  );
  return (
    <section className="danger-zone" aria-labelledby="danger-title">
      <h2 id="danger-title">Danger zone</h2>
      <p className="muted">
        Deleting a space deletes its frames; deleting the project, everything.
      </p>
      <ul className="list">
        {(spaces.data ?? []).map((s) => (
          <li key={s.id} className="actions">
            <ConfirmButton
              label={`Delete space ${s.name}`}
              question={`Delete the space ${s.name} and its frames?`}
              busy={removeSpace.isPending}
              onConfirm={() => removeSpace.mutate(s.id)}
            />
          </li>
        ))}
      </ul>
      <Problem error={removeSpace.error} />
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
