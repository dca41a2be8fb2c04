// Personal access tokens: create (the token is shown once, right after), list, revoke. Sessions
// from sign-in are listed too, so a forgotten one can be revoked.
import { useState } from 'react';
import { fp, useList, useWrite } from '../api.ts';
import { Field, formValues, Problem, Submit } from '../components/Form.tsx';
import { Loaded } from '../components/Loaded.tsx';
import { Table } from '../components/Table.tsx';

const TOKENS = ['tokens'];
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'never');

export function Account() {
  const tokens = useList(TOKENS, (cursor) =>
    fp().api.GET('/v2/user/tokens', { params: { query: { cursor } } }),
  );
  // The new token's secret, shown once; with its id, so that it goes once the token is revoked.
  const [shown, setShown] = useState<{ id: string; token: string }>();
  const create = useWrite(
    (body: { name: string; expires_in_days?: number }) =>
      fp().call(fp().api.POST('/v2/user/tokens', { body })),
    [TOKENS],
  );
  const revoke = useWrite(
    (token_id: string) =>
      fp().call(fp().api.DELETE('/v2/user/tokens/{token_id}', { params: { path: { token_id } } })),
    [TOKENS],
  );
  return (
    <>
      <h1>Account</h1>
      <section aria-labelledby="new-token">
        <h2 id="new-token">New personal token</h2>
        <form
          className="row"
          onSubmit={(e) => {
            const form = e.currentTarget;
            const v = formValues(e);
            const days = Number(v.days);
            create.mutate(
              { name: v.name ?? '', ...(days ? { expires_in_days: days } : {}) },
              {
                onSuccess: (t) => {
                  setShown({ id: t.id, token: t.token });
                  form.reset();
                },
              },
            );
          }}
        >
          <Field label="Name" name="name" required error={create.error} />
          <Field
            label="Expires in days (optional)"
            name="days"
            type="number"
            min={1}
            max={3650}
            error={create.error}
          />
          <Submit busy={create.isPending}>Create token</Submit>
        </form>
        <Problem error={create.error} fields={['name', 'expires_in_days']} />
        {shown && tokens.data?.some((t) => t.id === shown.id) && (
          <div className="notice" role="status">
            <p>Copy the token now: it is not shown again.</p>
            <code id="new-token-value" className="secret">
              {shown.token}
            </code>
          </div>
        )}
      </section>
      <section aria-labelledby="tokens-title">
        <h2 id="tokens-title">Tokens and sessions</h2>
        <Problem error={revoke.error} />
        <Loaded query={tokens}>
          {(list) => (
            <Table head={['Name', 'Kind', 'Last used', 'Expires']} actions stacked>
              {list.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td data-label="Kind">{t.kind}</td>
                  <td data-label="Last used">{when(t.last_used_at)}</td>
                  <td data-label="Expires">{when(t.expires_at)}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      disabled={revoke.isPending}
                      onClick={() => revoke.mutate(t.id)}
                      aria-label={`Revoke ${t.name}`}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Loaded>
      </section>
    </>
  );
}
