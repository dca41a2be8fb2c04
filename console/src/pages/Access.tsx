// "Who has access and why" (GET /v2/projects/<id>/access): the owner, each team the project is
// shared with, and each person with their effective role and every path that gives it.
import { useParams } from 'react-router';
import type { Schemas } from '../api.ts';
import { Loaded } from '../components/Loaded.tsx';
import { OrgLink } from '../components/OrgLink.tsx';
import { useAccess, useProject } from '../data/projects.ts';
import { BackLink } from '../components/BackLink.tsx';
import { Table } from '../components/Table.tsx';

type Access = Schemas['ProjectAccess'];
type Via = Access['members'][number]['via'][number];

/** One path to a role, in words. */
function because(via: Via, teams: Map<string, string>): string {
  if (via.kind === 'owner') return 'owns the project';
  if (via.kind === 'org')
    return via.org_role === 'owner' || via.org_role === 'admin'
      ? `is ${via.org_role} of the organization`
      : `is a member of the organization, whose members get ${via.base_role}`;
  const team = teams.get(via.team_id ?? '') ?? 'a team';
  return `is ${via.team_role} of ${team}, which has ${via.grant_role} (so ${via.role})`;
}

export function AccessPage() {
  const { projectId = '' } = useParams();
  const access = useAccess(projectId);
  const project = useProject(projectId);
  return (
    <>
      <BackLink to={`/console/projects/${projectId}`} name={project.data?.name} />
      <h1>Who has access and why</h1>
      <Loaded query={access}>
        {(a) => {
          const teams = new Map(a.grants.map((g) => [g.team.id, g.team.name]));
          return (
            <>
              <section aria-labelledby="owner-title">
                <h2 id="owner-title">Owner</h2>
                <p>
                  {a.org ? (
                    <>
                      The organization <OrgLink id={a.org.id} name={a.org.name} /> (members get{' '}
                      {a.org.base_role})
                    </>
                  ) : (
                    `${a.owner.name} (${a.owner.email})`
                  )}
                </p>
              </section>
              <section aria-labelledby="people-title">
                <h2 id="people-title">People</h2>
                <Table head={['Person', 'Role', 'Why']} stacked>
                  {a.members.map((m) => (
                    <tr key={m.user_id}>
                      <td>
                        {m.name}
                        <br />
                        <span className="muted">{m.email}</span>
                      </td>
                      <td>{m.role}</td>
                      <td>
                        <ul className="list">
                          {m.via.map((v) => (
                            <li key={`${v.kind}-${v.team_id ?? v.org_id ?? ''}`}>
                              {because(v, teams)}
                            </li>
                          ))}
                        </ul>
                      </td>
                    </tr>
                  ))}
                </Table>
              </section>
            </>
          );
        }}
      </Loaded>
    </>
  );
}
