// The caller's teams or orgs, with their role and member count, and a form to create one (the
// creator is its owner).
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { slugOf, useWrite } from '../api.ts';
import { capital, type Group, type GroupKind, useGroups } from '../data/groups.ts';
import { Field, formValues, Problem, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';

export function GroupsPage<G extends Group, R extends string>({
  kind,
  title,
}: {
  kind: GroupKind<G, R>;
  title: string;
}) {
  const groups = useGroups(kind);
  const navigate = useNavigate();
  // The slug follows the name, as the CLI makes it, until the user types one of their own.
  const [name, setName] = useState('');
  const [ownSlug, setOwnSlug] = useState<string>();
  const slug = ownSlug ?? (name.trim() ? slugOf(name, kind.kind) : '');
  const create = useWrite(
    (body: { name: string; slug: string }) => kind.create(body),
    [kind.listKey],
  );
  return (
    <>
      <h1>{title}</h1>
      <section aria-labelledby="groups-title">
        <h2 id="groups-title">Your {title.toLowerCase()}</h2>
        <Loaded query={groups}>
          {(list) =>
            list.length === 0 ? (
              <p className="muted">You are in no {kind.noun} yet.</p>
            ) : (
              <Table head={[capital(kind.noun), 'Slug', 'Your role', 'Members']}>
                {list.map((g) => (
                  <tr key={g.id}>
                    <td>
                      <Link to={`${kind.listPage}/${g.id}`}>{g.name}</Link>
                    </td>
                    <td>{g.slug}</td>
                    <td>{g.role}</td>
                    <td>{g.member_count}</td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="new-group">
        <h2 id="new-group">New {kind.noun}</h2>
        <form
          className="row"
          onSubmit={(e) => {
            const { name = '', slug = '' } = formValues(e);
            const open = (g: Group) => navigate(`${kind.listPage}/${g.id}`);
            create.mutate({ name, slug }, { onSuccess: open });
          }}
        >
          <Field
            label="Name"
            name="name"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={create.error}
          />
          <Field
            label="Slug"
            name="slug"
            required
            value={slug}
            onChange={(e) => setOwnSlug(e.currentTarget.value)}
            hint={`e.g. ${kind.slugExample}`}
            error={create.error}
          />
          <Submit busy={create.isPending}>Create {kind.noun}</Submit>
        </form>
        <Problem error={create.error} fields={['name', 'slug']} />
      </section>
    </>
  );
}
