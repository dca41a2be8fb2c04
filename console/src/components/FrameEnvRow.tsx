// One env var in the frame's table. A value is masked until revealed (each on its own, so that
// a screen shared or looked over shows only the one asked for); members may edit it in place,
// in a field masked the same way, or delete it. Viewers get no value (the API answers null).
import { useState } from 'react';
import { formValues } from './Form.tsx';

const MASK = '••••••••'; // one length for every value: the mask tells nothing of it

export function FrameEnvRow({
  name,
  value,
  canEdit,
  busy,
  set,
}: {
  name: string;
  value: string | null;
  canEdit: boolean;
  busy: boolean;
  /** A new value, or null to delete it; resolves once saved. */
  set: (value: string | null, onSaved: () => void) => void;
}) {
  const [shown, setShown] = useState(false);
  const [editing, setEditing] = useState(false);
  return (
    <tr>
      <th scope="row">
        <code>{name}</code>
      </th>
      <td data-label={editing ? undefined : 'Value'}>
        {value === null ? (
          <span className="muted">hidden</span>
        ) : editing ? (
          <form
            className="actions"
            onSubmit={(e) => set(formValues(e).value ?? '', () => setEditing(false))}
          >
            <input
              name="value"
              type={shown ? 'text' : 'password'}
              defaultValue={value}
              aria-label={`Value of ${name}`}
              autoComplete="off"
              // biome-ignore lint/a11y/noAutofocus: the field replaced the Edit button pressed.
              autoFocus
            />
            <button type="submit" className="primary" disabled={busy}>
              Save
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </form>
        ) : (
          <code className="env-value">
            {shown ? (
              value
            ) : (
              <>
                <span aria-hidden="true">{MASK}</span>
                <span className="sr-only">value hidden</span>
              </>
            )}
          </code>
        )}
      </td>
      <td>
        <span className="actions">
          {value !== null && (
            <button
              type="button"
              aria-label={`${shown ? 'Hide' : 'Reveal'} the value of ${name}`}
              aria-pressed={shown}
              onClick={() => setShown(!shown)}
            >
              {shown ? 'Hide' : 'Reveal'}
            </button>
          )}
          {canEdit && value !== null && !editing && (
            <button
              type="button"
              aria-label={`Edit ${name}`}
              disabled={busy}
              onClick={() => setEditing(true)}
            >
              Edit
            </button>
          )}
          {canEdit && (
            <button
              type="button"
              className="danger"
              aria-label={`Delete ${name}`}
              disabled={busy}
              onClick={() => set(null, () => {})}
            >
              Delete
            </button>
          )}
        </span>
      </td>
    </tr>
  );
}
