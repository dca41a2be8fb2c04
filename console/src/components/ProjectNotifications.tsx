// A project's notification endpoints (admins): where its events are POSTed, signed, whether
// each is on (and why not), and its actions. The form that adds one is NotificationAdd.tsx,
// its deliveries NotificationDeliveries.tsx.
import { useState } from 'react';
import { fp, type Schemas, useWrite } from '../api.ts';
import { endpointsKey, useEndpoints } from '../data/notifications.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Problem } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { NotificationAdd, SecretNotice } from './NotificationAdd.tsx';
import { NotificationDeliveries } from './NotificationDeliveries.tsx';
import { Table } from './Table.tsx';

type Endpoint = Schemas['NotificationEndpoint'];
type Secret = Schemas['NotificationEndpointWithSecret'];
const ONE = '/v2/projects/{project_id}/notifications/{endpoint_id}';

/** On or off, and why off: an admin turned it off, or the service did after failed tries. */
function State({ e }: { e: Endpoint }) {
  const n = e.consecutive_failures;
  const failures = n > 0 ? `, ${n} failed ${n === 1 ? 'try' : 'tries'} in a row` : '';
  if (e.enabled) return <span className="badge status-Online">{`on${failures}`}</span>;
  const why = e.disabled_reason ?? 'manual';
  return <span className={`badge status-${why}`}>{`off (${why})${failures}`}</span>;
}

export function ProjectNotifications({ project_id }: { project_id: string }) {
  const endpoints = useEndpoints(project_id);
  const [secret, setSecret] = useState<Secret>();
  const [shown, setShown] = useState<string>();
  // Every read under the project's notifications: the list and the deliveries shown.
  const refresh = [endpointsKey(project_id)];
  const path = (endpoint_id: string) => ({ params: { path: { project_id, endpoint_id } } });
  const turn = useWrite(
    ({ id, enabled }: { id: string; enabled: boolean }) =>
      fp().call(fp().api.PATCH(ONE, { ...path(id), body: { enabled } })),
    refresh,
  );
  const ping = useWrite((id: string) => fp().call(fp().api.POST(`${ONE}/test`, path(id))), refresh);
  const rotate = useWrite(
    (id: string) =>
      fp().call(
        fp().api.POST(`${ONE}/secret`, { ...path(id), body: { expire_previous_in_hours: 0 } }),
      ),
    refresh,
  );
  const remove = useWrite((id: string) => fp().call(fp().api.DELETE(ONE, path(id))), refresh);
  const row = (e: Endpoint) => (
    <tr key={e.id}>
      <td className="address">{e.url}</td>
      <td data-label="Events">{e.events.join(', ')}</td>
      <td data-label="Format">{e.format}</td>
      <td>
        <State e={e} />
      </td>
      <td>
        <span className="actions">
          <button
            type="button"
            disabled={turn.isPending}
            onClick={() => turn.mutate({ id: e.id, enabled: !e.enabled })}
          >
            {e.enabled ? 'Turn off' : 'Turn on'}
          </button>
          <button
            type="button"
            disabled={ping.isPending}
            onClick={() => ping.mutate(e.id, { onSuccess: () => setShown(e.id) })}
          >
            Send test event
          </button>
          <button
            type="button"
            aria-expanded={shown === e.id}
            aria-controls={shown === e.id ? 'deliveries' : undefined}
            onClick={() => setShown(shown === e.id ? undefined : e.id)}
          >
            Deliveries
          </button>
          <ConfirmButton
            label="Rotate secret"
            question="The current secret stops signing at once. Rotate?"
            busy={rotate.isPending}
            onConfirm={() => rotate.mutate(e.id, { onSuccess: setSecret })}
          />
          <ConfirmButton
            label="Remove"
            question={`Remove ${e.url} and its delivery log?`}
            busy={remove.isPending}
            onConfirm={() =>
              // Its secret, if shown, goes with it.
              remove.mutate(e.id, { onSuccess: () => secret?.id === e.id && setSecret(undefined) })
            }
          />
        </span>
      </td>
    </tr>
  );
  return (
    <section aria-labelledby="notifications-title">
      <h2 id="notifications-title">Notifications</h2>
      <p className="muted">The project's events, POSTed signed to your endpoints.</p>
      <Problem error={turn.error ?? ping.error ?? rotate.error ?? remove.error} />
      <Loaded query={endpoints}>
        {(list) => {
          const open = list.find((e) => e.id === shown);
          return (
            <>
              {list.length === 0 ? (
                <p className="muted">No endpoint.</p>
              ) : (
                <Table head={['URL', 'Events', 'Format', 'State']} actions stacked>
                  {list.map(row)}
                </Table>
              )}
              {open && <NotificationDeliveries project_id={project_id} endpoint={open} />}
            </>
          );
        }}
      </Loaded>
      <NotificationAdd project_id={project_id} onAdded={setSecret} />
      {secret && <SecretNotice endpoint={secret} />}
    </section>
  );
}
