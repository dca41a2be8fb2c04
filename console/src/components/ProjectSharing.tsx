// Who a project is shared with: grants to teams at a capped role (CONTRACT), made, changed and
// revoked by the project's owner; everyone else sees them read-only.
import { atLeast, fp, type Schemas, useRead, useWrite } from '../api.ts';
import { ConfirmButton } from './Confirm.tsx';
import { formValues, Problem, RoleForm, Select, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { ORG, useTeams } from '../data/groups.ts';
import { useAccess } from '../data/projects.ts';
import { Table } from './Table.tsx';

type Project = Schemas['Project'];
type GrantRole = 'viewer' | 'member' | 'admin';
const GRANT_ROLES = ['viewer', 'member', 'admin'] as const;

export function ProjectSharing({ project }: { project: Project }) {
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
