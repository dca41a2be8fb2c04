// Adding a notification endpoint: its URL, the events it receives (every event the API knows,
// from the SDK) and its format; and its signing secret, shown once, after adding or rotating.
import { fp, NOTIFICATION_EVENTS, type NotificationEvent, type Schemas, useWrite } from '../api.ts';
import { endpointsKey } from '../data/notifications.ts';
import { Field, fieldMessages, formValues, Problem, Select, Submit } from './Form.tsx';

type Secret = Schemas['NotificationEndpointWithSecret'];
type Format = NonNullable<Schemas['NotificationEndpointBody']['format']>;
// Typed by the API's enum both ways, as NOTIFICATION_EVENTS is.
const FORMATS: Record<Format, string> = {
  json: 'JSON: the event',
  slack: 'Slack: a sentence',
};

export function NotificationAdd({
  project_id,
  onAdded,
}: {
  project_id: string;
  onAdded: (endpoint: Secret) => void;
}) {
  const add = useWrite(
    (body: { url: string; events: NotificationEvent[]; format: Format }) =>
      fp().call(
        fp().api.POST('/v2/projects/{project_id}/notifications', {
          params: { path: { project_id } },
          body,
        }),
      ),
    [endpointsKey(project_id)],
  );
  const eventErrors = fieldMessages(add.error, 'events');
  return (
    <>
      <form
        className="stack"
        onSubmit={(e) => {
          const form = e.currentTarget;
          const v = formValues(e);
          // Checkboxes of one name: every checked one, which formValues (one value) would lose.
          const events = new FormData(form).getAll('events').map(String) as NotificationEvent[];
          const body = { url: v.url ?? '', events, format: v.format as Format };
          add.mutate(body, {
            onSuccess: (created) => {
              form.reset();
              onAdded(created);
            },
          });
        }}
      >
        <h3>Add an endpoint</h3>
        <Field
          label="Endpoint URL"
          name="url"
          type="url"
          required
          placeholder="https://example.com/hooks/frameplane"
          error={add.error}
        />
        <fieldset className="checks">
          <legend>Events</legend>
          {NOTIFICATION_EVENTS.map((name) => (
            <label key={name}>
              <input type="checkbox" name="events" value={name} /> {name}
            </label>
          ))}
          {eventErrors.length > 0 && <p className="field-error">{eventErrors.join(' ')}</p>}
        </fieldset>
        <Select
          label="Format"
          name="format"
          options={Object.entries(FORMATS) as Array<[string, string]>}
          defaultValue="json"
          error={add.error}
        />
        <div>
          <Submit busy={add.isPending}>Add endpoint</Submit>
        </div>
      </form>
      <Problem error={add.error} fields={['url', 'events', 'format']} />
    </>
  );
}

export function SecretNotice({ endpoint }: { endpoint: Secret }) {
  return (
    <div className="notice" role="status">
      <p>
        The signing secret of {endpoint.url}: check each delivery's signature with it. It is not
        shown again.
      </p>
      <code className="secret">{endpoint.secret}</code>
    </div>
  );
}
