// One organization: what a team's page has (members, invitations, name and slug, leave or
// delete), plus what only an org has (CONTRACT 3a): its base role, the role every plain member
// gets on each of its projects, which its owner and admins change; and its projects, which its
// owner and admins create (an org member creates none).
import { Link, useParams } from 'react-router';
import { atLeast, useWrite } from '../api.ts';
import { GroupPage } from '../components/Group.tsx';
import { formValues, Problem, Select, Submit } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { ORG, type Org } from '../data/groups.ts';
import { useProjects } from '../data/projects.ts';

const BASE_ROLES = ['none', 'viewer', 'member', 'admin'] as const;

function BaseRole({ org }: { org: Org }) {
  const save = useWrite(
    (base_role: Org['base_role']) => ORG.update(org.id, { base_role }),
    [['org', org.id], ORG.listKey],
  );
  return (
    <section aria-labelledby="base-role-title">
      <h2 id="base-role-title">Members' role on its projects</h2>
      <p className="muted">
        Each member who is not an owner or admin of the organization gets this role on every project
        it owns: viewers see them, members also deploy and edit frames, admins also manage spaces,
        frames and agents; with none, only what their teams are granted.
      </p>
      <form
        className="row"
        onSubmit={(e) => save.mutate(formValues(e).base_role as Org['base_role'])}
      >
        <Select
          label="Base role"
          name="base_role"
          options={BASE_ROLES}
          defaultValue={org.base_role}
          key={org.base_role}
          error={save.error}
        />
        <Submit busy={save.isPending}>Save base role</Submit>
      </form>
      <Problem error={save.error} fields={['base_role']} />
    </section>
  );
}

/** The org's projects the caller reaches (a member with base role none may reach none). */
function Projects({ org }: { org: Org }) {
  const projects = useProjects();
  return (
    <section aria-labelledby="org-projects-title">
      <h2 id="org-projects-title">Projects</h2>
      <Loaded query={projects}>
        {(list) => {
          const own = list.filter((p) => p.owner_kind === 'org' && p.owner_id === org.id);
          return own.length === 0 ? (
            <p className="muted">No project of this organization that you can open.</p>
          ) : (
            <ul className="list">
              {own.map((p) => (
                <li key={p.id}>
                  <Link to={`/console/projects/${p.id}`}>{p.name}</Link>{' '}
                  <span className="muted">(you are {p.role})</span>
                </li>
              ))}
            </ul>
          );
        }}
      </Loaded>
      {atLeast(org.role, 'admin') && (
        <p>
          <Link to={`/console/projects?owner=${org.id}`}>New project of {org.name}</Link>
        </p>
      )}
    </section>
  );
}

export function OrgPage() {
  const { orgId = '' } = useParams();
  return (
    <GroupPage
      kind={ORG}
      id={orgId}
      facts={(o) => (
        <>
          {' '}
          · members get <strong id="base-role">{o.base_role}</strong> on its projects
        </>
      )}
      more={(o) => (
        <>
          {o.billing_status === 'past_due' && (
            <p className="notice" role="status">
              Payment is overdue: the frames of its projects are suspended until the operator marks
              it paid.
            </p>
          )}
          <Projects org={o} />
          {atLeast(o.role, 'admin') && <BaseRole org={o} />}
        </>
      )}
    />
  );
}
