// One team: its members (roles changed or removed by admins), its invitations (sent, resent,
// revoked by admins), leaving it and, for its owner, deleting it. Controls a role cannot use are
// not shown; the service refuses them anyway.
import { useNavigate, useParams } from 'react-router';
import { atLeast, fp, type Schemas, useList, useRead, useWrite } from '../api.ts';
import { ConfirmButton } from '../components/Confirm.tsx';
import { Field, formValues, Problem, Select, Submit } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { TEAMS } from './Teams.tsx';
import { Table } from '../components/Table.tsx';

const GIVEN_ROLES = ['viewer', 'member', 'admin'] as const;
type GivenRole = (typeof GIVEN_ROLES)[number];
type Team = Schemas['Team'];

function Members({ team }: { team: Team }) {
  const team_id = team.id;
  const key = ['team', team_id, 'members'];
  const members = useList(key, (cursor) =>
    fp().api.GET('/v2/teams/{team_id}/members', {
      params: { path: { team_id }, query: { cursor } },
    }),
  );
  const refresh = [key, ['team', team_id], TEAMS];
  const change = useWrite(
    ({ user_id, role }: { user_id: string; role: GivenRole }) =>
      fp().call(
        fp().api.PATCH('/v2/teams/{team_id}/members/{user_id}', {
          params: { path: { team_id, user_id } },
          body: { role },
        }),
      ),
    refresh,
  );
  const remove = useWrite(
    (user_id: string) =>
      fp().call(
        fp().api.DELETE('/v2/teams/{team_id}/members/{user_id}', {
          params: { path: { team_id, user_id } },
        }),
      ),
    refresh,
  );
  const manage = atLeast(team.role, 'admin');
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <Problem error={change.error ?? remove.error} />
      <Loaded query={members}>
        {(list) => (
          <Table head={['Name', 'E-mail', 'Role']} actions={manage} stacked>
            {list.map((m) => (
              <tr key={m.user_id}>
                <td>{m.name}</td>
                <td>{m.email}</td>
                <td>
                  {manage && m.role !== 'owner' ? (
                    <form
                      className="actions"
                      onSubmit={(e) => {
                        const role = formValues(e).role as GivenRole;
                        change.mutate({ user_id: m.user_id, role });
                      }}
                    >
                      <select name="role" defaultValue={m.role} aria-label={`Role of ${m.email}`}>
                        {GIVEN_ROLES.map((r) => (
                          <option key={r}>{r}</option>
                        ))}
                      </select>
                      <button type="submit" disabled={change.isPending}>
                        Change
                      </button>
                    </form>
                  ) : (
                    m.role
                  )}
                </td>
                {manage && (
                  <td>
                    {m.role !== 'owner' && (
                      <ConfirmButton
                        label="Remove"
                        question={`Remove ${m.email}?`}
                        busy={remove.isPending}
                        onConfirm={() => remove.mutate(m.user_id)}
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
    </section>
  );
}

function Invitations({ team }: { team: Team }) {
  const team_id = team.id;
  const key = ['team', team_id, 'invitations'];
  const invitations = useList(key, (cursor) =>
    fp().api.GET('/v2/teams/{team_id}/invitations', {
      params: { path: { team_id }, query: { cursor } },
    }),
  );
  const send = useWrite(
    (body: { email: string; role: GivenRole }) =>
      fp().call(
        fp().api.POST('/v2/teams/{team_id}/invitations', { params: { path: { team_id } }, body }),
      ),
    [key],
  );
  const path = (invitation_id: string) => ({ params: { path: { team_id, invitation_id } } });
  const resend = useWrite(
    (id: string) =>
      fp().call(fp().api.POST('/v2/teams/{team_id}/invitations/{invitation_id}/resend', path(id))),
    [key],
  );
  const revoke = useWrite(
    (id: string) =>
      fp().call(fp().api.DELETE('/v2/teams/{team_id}/invitations/{invitation_id}', path(id))),
    [key],
  );
  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <form
        className="row"
        onSubmit={(e) => {
          const form = e.currentTarget;
          const v = formValues(e);
          send.mutate(
            { email: v.email ?? '', role: v.role as GivenRole },
            { onSuccess: () => form.reset() },
          );
        }}
      >
        <Field label="E-mail to invite" name="email" type="email" required error={send.error} />
        <Select
          label="Role"
          name="role"
          options={GIVEN_ROLES}
          defaultValue="member"
          error={send.error}
        />
        <Submit busy={send.isPending}>Send invitation</Submit>
      </form>
      <Problem error={send.error} fields={['email', 'role']} />
      <Problem error={resend.error ?? revoke.error} />
      <Loaded query={invitations}>
        {(list) =>
          list.length > 0 && (
            <Table head={['E-mail', 'Role', 'Status', 'Expires']} actions stacked>
              {list.map((i) => (
                <tr key={i.id}>
                  <td>{i.email}</td>
                  <td>{i.role}</td>
                  <td>
                    <span className={`badge status-${i.status}`}>{i.status}</span>
                  </td>
                  <td data-label="Expires">{new Date(i.expires_at).toLocaleDateString()}</td>
                  <td className="actions">
                    {(i.status === 'pending' || i.status === 'expired') && (
                      <button
                        type="button"
                        disabled={resend.isPending}
                        onClick={() => resend.mutate(i.id)}
                      >
                        Resend
                      </button>
                    )}
                    {i.status === 'pending' && (
                      <ConfirmButton
                        label="Revoke"
                        question={`Revoke the invitation of ${i.email}?`}
                        busy={revoke.isPending}
                        onConfirm={() => revoke.mutate(i.id)}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </section>
  );
}

/** Name and slug (admins); the slug must stay unique, which the service checks. */
function Rename({ team }: { team: Team }) {
  const team_id = team.id;
  const save = useWrite(
    (body: { name?: string; slug?: string }) =>
      fp().call(fp().api.PATCH('/v2/teams/{team_id}', { params: { path: { team_id } }, body })),
    [['team', team_id], TEAMS],
  );
  return (
    <section aria-labelledby="rename-title">
      <h2 id="rename-title">Name and slug</h2>
      <form
        className="row"
        key={`${team.name}/${team.slug}`}
        onSubmit={(e) => {
          const v = formValues(e);
          const body = {
            ...(v.name !== team.name ? { name: v.name } : {}),
            ...(v.slug !== team.slug ? { slug: v.slug } : {}),
          };
          if (Object.keys(body).length) save.mutate(body);
        }}
      >
        <Field label="Team name" name="name" required defaultValue={team.name} error={save.error} />
        <Field label="Team slug" name="slug" required defaultValue={team.slug} error={save.error} />
        <Submit busy={save.isPending}>Save</Submit>
      </form>
      <Problem error={save.error} fields={['name', 'slug']} />
    </section>
  );
}

function Leave({ team }: { team: Team }) {
  const navigate = useNavigate();
  const team_id = team.id;
  const gone = { onSuccess: () => navigate('/console/teams') };
  const leave = useWrite(
    () => fp().call(fp().api.POST('/v2/teams/{team_id}/leave', { params: { path: { team_id } } })),
    [TEAMS],
  );
  const remove = useWrite(
    () => fp().call(fp().api.DELETE('/v2/teams/{team_id}', { params: { path: { team_id } } })),
    [TEAMS],
  );
  const owner = team.role === 'owner';
  return (
    <section aria-labelledby="leave-title">
      <h2 id="leave-title">{owner ? 'Delete the team' : 'Leave the team'}</h2>
      {owner ? (
        <>
          <p className="muted">
            Deleting removes its members, invitations and the projects' grants to it.
          </p>
          <ConfirmButton
            label="Delete team"
            question={`Delete ${team.name} for everyone?`}
            busy={remove.isPending}
            onConfirm={() => remove.mutate(undefined, gone)}
          />
        </>
      ) : (
        <ConfirmButton
          label="Leave team"
          question={`Leave ${team.name}?`}
          busy={leave.isPending}
          onConfirm={() => leave.mutate(undefined, gone)}
        />
      )}
      <Problem error={leave.error ?? remove.error} />
    </section>
  );
}

export function Team() {
  const { teamId = '' } = useParams();
  const team = useRead(['team', teamId], () =>
    fp().call(fp().api.GET('/v2/teams/{team_id}', { params: { path: { team_id: teamId } } })),
  );
  return (
    <Loaded query={team}>
      {(t) => (
        <>
          <h1>{t.name}</h1>
          <p className="muted">
            <span id="team-slug">{t.slug}</span> · you are <strong id="my-role">{t.role}</strong> ·{' '}
            {t.member_count} {t.member_count === 1 ? 'member' : 'members'}
          </p>
          <Members team={t} />
          {atLeast(t.role, 'admin') && <Invitations team={t} />}
          {atLeast(t.role, 'admin') && <Rename team={t} />}
          <Leave team={t} />
        </>
      )}
    </Loaded>
  );
}
