// The projects the caller reaches (owned, shared with their teams, or their organizations'),
// with their role in each, and a form to create one.
import { Link, useNavigate } from 'react-router';
import { fp, useList, useWrite } from '../api.ts';
import { Field, formValues, Problem, Submit } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { Table } from '../components/Table.tsx';

export const PROJECTS = ['projects'];

export function Projects() {
  const navigate = useNavigate();
  const projects = useList(PROJECTS, (cursor) =>
    fp().api.GET('/v2/projects', { params: { query: { cursor } } }),
  );
  const create = useWrite(
    (name: string) => fp().call(fp().api.POST('/v2/projects', { body: { name } })),
    [PROJECTS],
  );
  return (
    <>
      <h1>Projects</h1>
      <section aria-labelledby="projects-title">
        <h2 id="projects-title">Your projects</h2>
        <Loaded query={projects}>
          {(list) =>
            list.length === 0 ? (
              <p className="muted">No project yet: create one, or ask to be invited to a team.</p>
            ) : (
              <Table head={['Project', 'Your role', 'Owned by']}>
                {list.map((p) => (
                  <tr key={p.id}>
                    <td>
                      <Link to={`/console/projects/${p.id}`}>{p.name}</Link>
                    </td>
                    <td>{p.role}</td>
                    <td>
                      {p.owner_kind === 'org'
                        ? 'an organization'
                        : p.role === 'owner'
                          ? 'you'
                          : 'a person'}
                    </td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="new-project">
        <h2 id="new-project">New project</h2>
        <form
          className="row"
          onSubmit={(e) =>
            create.mutate(formValues(e).name ?? '', {
              onSuccess: (p) => navigate(`/console/projects/${p.id}`),
            })
          }
        >
          <Field label="Name" name="name" required maxLength={100} error={create.error} />
          <Submit busy={create.isPending}>Create project</Submit>
        </form>
        <Problem error={create.error} fields={['name']} />
      </section>
    </>
  );
}
