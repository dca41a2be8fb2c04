// A frame's env vars. Viewers get the names only (the API answers every value as null); members
// add, change and delete them (PATCH merges; null deletes). Edits wait for a deploy.
import { fp, useRead, useWrite } from '../api.ts';
import { type FrameRef, frameKey, params } from '../data/frames.ts';
import { Field, formValues, Problem, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';

const PATH = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/env';

export function FrameEnv({ frame, canEdit }: { frame: FrameRef; canEdit: boolean }) {
  const key = [...frameKey(frame), 'env'];
  const env = useRead(key, () => fp().call(fp().api.GET(PATH, params(frame))));
  const patch = useWrite(
    (vars: Record<string, string | null>) =>
      fp().call(fp().api.PATCH(PATH, { ...params(frame), body: { vars } })),
    [key, frameKey(frame)],
  );
  return (
    <section aria-labelledby="env-title">
      <h2 id="env-title">Environment</h2>
      <Loaded query={env}>
        {(e) => (
          <>
            {!e.values_visible && <p className="muted">Values are hidden from viewers.</p>}
            <table>
              <tbody>
                {Object.entries(e.vars).map(([name, value]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td>
                      {value === null ? (
                        <span className="muted">hidden</span>
                      ) : (
                        <code>{value}</code>
                      )}
                    </td>
                    {canEdit && (
                      <td>
                        <button
                          type="button"
                          className="danger"
                          aria-label={`Delete ${name}`}
                          disabled={patch.isPending}
                          onClick={() => patch.mutate({ [name]: null })}
                        >
                          Delete
                        </button>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </Loaded>
      {canEdit && (
        <form
          className="row"
          onSubmit={(e) => {
            const form = e.currentTarget;
            const v = formValues(e);
            patch.mutate({ [v.name ?? '']: v.value ?? '' }, { onSuccess: () => form.reset() });
          }}
        >
          <Field label="Variable" name="name" required error={patch.error} />
          <Field label="Value" name="value" error={patch.error} />
          <Submit busy={patch.isPending}>Set variable</Submit>
        </form>
      )}
      <Problem error={patch.error} />
    </section>
  );
}
