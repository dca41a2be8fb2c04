// A team's or an org's members. Admins change roles (to those the kind gives) and remove
// members; nobody changes or removes the owner. Others read the list: the service refuses the
// rest anyway.
import { atLeast, useList, useWrite } from '../api.ts';
import type { Group, GroupProps } from '../data/groups.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Problem, RoleForm } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';

export function Members<G extends Group, R extends string>({ kind, group }: GroupProps<G, R>) {
  const id = group.id;
  const key = [kind.kind, id, 'members'];
  const members = useList(key, kind.members(id));
  const refresh = [key, [kind.kind, id], kind.listKey];
  const change = useWrite(
    ({ user_id, role }: { user_id: string; role: R }) => kind.setRole(id, user_id, role),
    refresh,
  );
  const remove = useWrite((user_id: string) => kind.removeMember(id, user_id), refresh);
  const manage = atLeast(group.role, 'admin');
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
                    <RoleForm
                      label={`Role of ${m.email}`}
                      roles={kind.roles}
                      role={m.role}
                      busy={change.isPending}
                      change={(role) => change.mutate({ user_id: m.user_id, role })}
                    />
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
