// Forms: fields that show the API's problem+json errors next to themselves, and one line for
// an error that names no field. A validation error names its fields in `errors[].path`; a few
// refusals are about one field without naming it (a taken e-mail), mapped here.
import { type FormEvent, type InputHTMLAttributes, type ReactNode, useId } from 'react';
import { FrameplaneError } from '../api.ts';

const CODE_FIELDS: Record<string, string> = {
  email_taken: 'email',
  invalid_credentials: 'password',
  slug_taken: 'slug',
  space_name_taken: 'name',
  volume_name_taken: 'name',
  mount_path_taken: 'mount_path',
  domain_taken: 'hostname',
  invitation_exists: 'email',
  already_member: 'email',
  grant_exists: 'team_id',
};

/** The messages of `error` about the field `name` (or a part of it, like `vars.A`). */
export function fieldMessages(error: unknown, name: string): string[] {
  if (!(error instanceof FrameplaneError)) return [];
  const own = error.errors
    .filter((e) => e.path === name || e.path.startsWith(`${name}.`))
    .map((e) => (e.path === name ? e.message : `${e.path}: ${e.message}`));
  if (own.length) return own;
  return CODE_FIELDS[error.code] === name ? [error.detail] : [];
}

const claimed = (error: unknown, fields: string[]) =>
  fields.some((f) => fieldMessages(error, f).length > 0);

/** The error's detail, unless a field of the form shows it already. */
export function Problem({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error || claimed(error, fields)) return null;
  const text = error instanceof FrameplaneError ? error.detail || error.message : String(error);
  return (
    <p className="problem" role="alert">
      {text}
    </p>
  );
}

type FieldProps = InputHTMLAttributes<HTMLInputElement> & {
  label: string;
  name: string;
  error?: unknown;
  hint?: string;
};

export function Field({ label, name, error, hint, ...input }: FieldProps) {
  const id = useId();
  const messages = fieldMessages(error, name);
  const described = [hint && `${id}-hint`, messages.length && `${id}-error`].filter(Boolean);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        aria-invalid={messages.length > 0 || undefined}
        aria-describedby={described.join(' ') || undefined}
        {...input}
      />
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
      {messages.length > 0 && (
        <p id={`${id}-error`} className="field-error">
          {messages.join(' ')}
        </p>
      )}
    </div>
  );
}

export function Select({
  label,
  name,
  options,
  error,
  defaultValue,
}: {
  label: string;
  name: string;
  options: readonly string[] | Array<[string, string]>;
  error?: unknown;
  defaultValue?: string;
}) {
  const id = useId();
  const messages = fieldMessages(error, name);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={defaultValue}>
        {options.map((o) => {
          const [value, text] = typeof o === 'string' ? [o, o] : o;
          return (
            <option key={value} value={value}>
              {text}
            </option>
          );
        })}
      </select>
      {messages.length > 0 && <p className="field-error">{messages.join(' ')}</p>}
    </div>
  );
}

/** The form's fields as strings, for a submit handler. */
export function formValues(e: FormEvent<HTMLFormElement>): Record<string, string> {
  e.preventDefault();
  const values: Record<string, string> = {};
  for (const [k, v] of new FormData(e.currentTarget)) values[k] = String(v);
  return values;
}

export function Submit({ busy, children }: { busy: boolean; children: ReactNode }) {
  return (
    <button type="submit" className="primary" disabled={busy} aria-busy={busy || undefined}>
      {children}
    </button>
  );
}

/** A row's role as a select and a Change button (a member's, a grant's), in its table cell. */
export function RoleForm<R extends string>(p: {
  label: string;
  roles: readonly R[];
  role: string;
  busy: boolean;
  change: (role: R) => void;
}) {
  return (
    <form className="actions" onSubmit={(e) => p.change(formValues(e).role as R)}>
      <select name="role" defaultValue={p.role} aria-label={p.label}>
        {p.roles.map((r) => (
          <option key={r}>{r}</option>
        ))}
      </select>
      <button type="submit" disabled={p.busy}>
        Change
      </button>
    </form>
  );
}

/** A one-field form that renames something, its error under the field and below it. */
export function RenameForm(p: {
  label: string;
  button: string;
  name: string | undefined;
  rename: { mutate: (name: string) => void; isPending: boolean; error: unknown };
}) {
  const { rename } = p;
  return (
    <>
      <form className="row" onSubmit={(e) => rename.mutate(formValues(e).name ?? '')}>
        {/* Keyed by the name: the field shows a name that arrives (or changes) later. */}
        <Field
          label={p.label}
          name="name"
          required
          defaultValue={p.name}
          key={p.name}
          error={rename.error}
        />
        <Submit busy={rename.isPending}>{p.button}</Submit>
      </form>
      <Problem error={rename.error} fields={['name']} />
    </>
  );
}
