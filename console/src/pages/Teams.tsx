// The caller's teams, with their role and member count, and a form to create one.
import { Link, useNavigate } from 'react-router';
import { fp, useList, useWrite } from '../api.ts';
import { Field, formValues, Problem, Submit } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { Table } from '../components/Table.tsx';

export const TEAMS = ['teams'];
export const useTeams = () =>
  useList(TEAMS, (cursor) => fp().api.GET('/v2/teams', { params: { query: { cursor } } }));

export function Teams() {
  const teams = useTeams();
  const navigate = useNavigate();
  const create = useWrite(
    (body: { name: string; slug: string }) => fp().call(fp().api.POST('/v2/teams', { body })),
    [TEAMS],
  );
  return (
    <>
      <h1>Teams</h1>
      <section aria-labelledby="teams-title">
        <h2 id="teams-title">Your teams</h2>
        <Loaded query={teams}>
          {(list) =>
            list.length === 0 ? (
              <p className="muted">You are in no team yet.</p>
            ) : (
              <Table head={['Team', 'Slug', 'Your role', 'Members']}>
                {list.map((t) => (
                  <tr key={t.id}>
                    <td>
                      <Link to={`/console/teams/${t.id}`}>{t.name}</Link>
                    </td>
                    <td>{t.slug}</td>
                    <td>{t.role}</td>
                    <td>{t.member_count}</td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="new-team">
        <h2 id="new-team">New team</h2>
        <form
          className="row"
          onSubmit={(e) => {
            const v = formValues(e);
            create.mutate(
              { name: v.name ?? '', slug: v.slug ?? '' },
              { onSuccess: (team) => navigate(`/console/teams/${team.id}`) },
            );
          }}
        >
          <Field label="Name" name="name" required error={create.error} />
          <Field label="Slug" name="slug" required hint="e.g. web-team" error={create.error} />
          <Submit busy={create.isPending}>Create team</Submit>
        </form>
        <Problem error={create.error} fields={['name', 'slug']} />
      </section>
    </>
  );
}
