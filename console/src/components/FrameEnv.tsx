// A frame's env vars. Viewers get the names only (the API answers every value as null); members
// add, change and delete them (PATCH merges; null deletes), and see each value once they reveal
// it (FrameEnvRow). Edits wait for a deploy.
import { fp, useRead, useWrite } from '../api.ts';
import { type FrameRef, frameKey, params } from '../data/frames.ts';
import { FrameEnvRow } from './FrameEnvRow.tsx';
import { Field, formValues, Problem, Submit } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';

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
            {Object.keys(e.vars).length === 0 ? (
              <p className="muted">No variable yet.</p>
            ) : (
              <Table head={['Name', 'Value']} actions stacked>
                {Object.entries(e.vars).map(([name, value]) => (
                  <FrameEnvRow
                    key={name}
                    name={name}
                    value={value}
                    canEdit={canEdit}
                    busy={patch.isPending}
                    set={(v, onSaved) => patch.mutate({ [name]: v }, { onSuccess: onSaved })}
                  />
                ))}
              </Table>
            )}
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
