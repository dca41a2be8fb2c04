// The projects the caller reaches (owned, shared with their teams, or their organizations'),
// with their role in each and who owns them, and a form to create one: owned by the caller, or
// by an organization the caller is an owner or admin of (who alone may create its projects).
import { Link, useNavigate, useSearchParams } from 'react-router';
import { atLeast, fp, useWrite } from '../api.ts';
import { Field, formValues, Problem, Select, Submit } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { OrgLink } from '../components/OrgLink.tsx';
import { Table } from '../components/Table.tsx';
import { useOrgs } from '../data/groups.ts';
import { PROJECTS, useProjects } from '../data/projects.ts';

export function Projects() {
  const navigate = useNavigate();
  const projects = useProjects();
  const orgs = useOrgs();
  // `?owner=<org id>`: the org page's "new project" link preselects its org.
  const [search] = useSearchParams();
  const creators = (orgs.data ?? []).filter((o) => atLeast(o.role, 'admin'));
  const create = useWrite(
    (body: { name: string; org_id?: string }) => fp().call(fp().api.POST('/v2/projects', { body })),
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
                      {p.owner_kind === 'org' ? (
                        <OrgLink id={p.owner_id} />
                      ) : p.role === 'owner' ? (
                        'you'
                      ) : (
                        'a person'
                      )}
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
          onSubmit={(e) => {
            const { name = '', org_id } = formValues(e);
            create.mutate(
              { name, ...(org_id ? { org_id } : {}) },
              { onSuccess: (p) => navigate(`/console/projects/${p.id}`) },
            );
          }}
        >
          <Field label="Name" name="name" required maxLength={100} error={create.error} />
          {creators.length > 0 && (
            <Select
              label="Owner"
              name="org_id"
              options={[['', 'You'], ...creators.map((o): [string, string] => [o.id, o.name])]}
              defaultValue={search.get('owner') ?? ''}
              error={create.error}
            />
          )}
          <Submit busy={create.isPending}>Create project</Submit>
        </form>
        <Problem error={create.error} fields={['name', 'org_id']} />
      </section>
    </>
  );
}
