// A team's or an org's invitations, for its admins: send one (an e-mail with a link), resend
// a pending or expired one (a new link and a new week), revoke a pending one; each with its
// status.
import { useList, useWrite } from '../api.ts';
import type { Group, GroupProps } from '../data/groups.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Field, formValues, Problem, Select, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';

export function Invitations<G extends Group, R extends string>({ kind, group }: GroupProps<G, R>) {
  const id = group.id;
  const key = [kind.kind, id, 'invitations'];
  const invitations = useList(key, kind.invitations(id));
  const send = useWrite((body: { email: string; role: R }) => kind.invite(id, body), [key]);
  const resend = useWrite((invitation: string) => kind.resend(id, invitation), [key]);
  const revoke = useWrite((invitation: string) => kind.revoke(id, invitation), [key]);
  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <form
        className="row"
        onSubmit={(e) => {
          const form = e.currentTarget;
          const v = formValues(e);
          send.mutate(
            { email: v.email ?? '', role: v.role as R },
            { onSuccess: () => form.reset() },
          );
        }}
      >
        <Field label="E-mail to invite" name="email" type="email" required error={send.error} />
        <Select
          label="Role"
          name="role"
          options={kind.roles}
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
                  {/* A flex box inside the cell: a cell that is one is no table cell any more. */}
                  <td>
                    <span className="actions">
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
                    </span>
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
