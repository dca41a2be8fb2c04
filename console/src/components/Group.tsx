// One team's or one org's page: its name, slug, the caller's role and member count, then its
// members, its invitations (admins), its name and slug (admins), and leaving it or, for its
// owner, deleting it. A page passes what only its kind has (an org's base role, its projects)
// as `more`. Controls a role cannot use are not shown; the service refuses them anyway.
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { atLeast, useRead, useWrite } from '../api.ts';
import { capital, type Group, type GroupKind, type GroupProps } from '../data/groups.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Field, formValues, Problem, Submit } from './Form.tsx';
import { Invitations } from './Invitations.tsx';
import { Loaded } from './Loaded.tsx';
import { Members } from './Members.tsx';

/** Name and slug (admins); the slug must stay unique, which the service checks. */
function Rename<G extends Group, R extends string>({ kind, group }: GroupProps<G, R>) {
  const save = useWrite(
    (body: { name?: string; slug?: string }) => kind.update(group.id, body),
    [[kind.kind, group.id], kind.listKey],
  );
  return (
    <section aria-labelledby="rename-title">
      <h2 id="rename-title">Name and slug</h2>
      <form
        className="row"
        key={`${group.name}/${group.slug}`}
        onSubmit={(e) => {
          const v = formValues(e);
          const body = {
            ...(v.name !== group.name ? { name: v.name } : {}),
            ...(v.slug !== group.slug ? { slug: v.slug } : {}),
          };
          if (Object.keys(body).length) save.mutate(body);
        }}
      >
        {(['name', 'slug'] as const).map((field) => (
          <Field
            key={field}
            label={`${capital(kind.noun)} ${field}`}
            name={field}
            required
            defaultValue={group[field]}
            error={save.error}
          />
        ))}
        <Submit busy={save.isPending}>Save</Submit>
      </form>
      <Problem error={save.error} fields={['name', 'slug']} />
    </section>
  );
}

/** Anyone but the owner leaves; the owner, who cannot leave, deletes it instead. */
function Leave<G extends Group, R extends string>({ kind, group }: GroupProps<G, R>) {
  const navigate = useNavigate();
  const gone = { onSuccess: () => navigate(kind.listPage) };
  const leave = useWrite(() => kind.leave(group.id), [kind.listKey]);
  const remove = useWrite(() => kind.remove(group.id), [kind.listKey]);
  const owner = group.role === 'owner';
  return (
    <section aria-labelledby="leave-title">
      <h2 id="leave-title">
        {owner ? 'Delete' : 'Leave'} the {kind.noun}
      </h2>
      {owner ? (
        <>
          <p className="muted">{kind.deleteNote}</p>
          <ConfirmButton
            label={`Delete ${kind.noun}`}
            question={`Delete ${group.name} for everyone?`}
            busy={remove.isPending}
            onConfirm={() => remove.mutate(undefined, gone)}
          />
        </>
      ) : (
        <ConfirmButton
          label={`Leave ${kind.noun}`}
          question={`Leave ${group.name}?`}
          busy={leave.isPending}
          onConfirm={() => leave.mutate(undefined, gone)}
        />
      )}
      <Problem error={leave.error ?? remove.error} />
    </section>
  );
}

export function GroupPage<G extends Group, R extends string>({
  kind,
  id,
  facts,
  more,
}: {
  kind: GroupKind<G, R>;
  id: string;
  /** More of the line under the name. */
  facts?: (group: G) => ReactNode;
  /** Sections after the members. */
  more?: (group: G) => ReactNode;
}) {
  const group = useRead([kind.kind, id], () => kind.get(id));
  return (
    <Loaded query={group}>
      {(g) => (
        <>
          <h1>{g.name}</h1>
          <p className="muted">
            <span id={`${kind.kind}-slug`}>{g.slug}</span> · you are{' '}
            <strong id="my-role">{g.role}</strong> · {g.member_count}{' '}
            {g.member_count === 1 ? 'member' : 'members'}
            {facts?.(g)}
          </p>
          <Members kind={kind} group={g} />
          {more?.(g)}
          {atLeast(g.role, 'admin') && <Invitations kind={kind} group={g} />}
          {atLeast(g.role, 'admin') && <Rename kind={kind} group={g} />}
          <Leave kind={kind} group={g} />
        </>
      )}
    </Loaded>
  );
}
