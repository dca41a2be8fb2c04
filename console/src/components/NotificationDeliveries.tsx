// A notification endpoint's newest deliveries: the event, whether it arrived, how many tries,
// the receiver's answer or why it failed. One may be sent again: a new delivery, same event.
import { fp, type Schemas, useWrite } from '../api.ts';
import { deliveriesKey, useDeliveries } from '../data/notifications.ts';
import { Problem } from './Form.tsx';
import { Loaded } from './Loaded.tsx';
import { Table } from './Table.tsx';
import { dateTime } from './words.ts';

type Endpoint = Schemas['NotificationEndpoint'];
type Delivery = Schemas['NotificationDelivery'];
const ONE = '/v2/projects/{project_id}/notifications/{endpoint_id}';

/** The last try's status code, or why the delivery failed without one. */
function answer(d: Delivery) {
  const last = d.attempts.at(-1);
  if (last?.status_code != null) return String(last.status_code);
  return last?.error ?? d.last_error ?? '—';
}

export function NotificationDeliveries({
  project_id,
  endpoint,
}: {
  project_id: string;
  endpoint: Endpoint;
}) {
  const endpoint_id = endpoint.id;
  const deliveries = useDeliveries(project_id, endpoint_id);
  const redeliver = useWrite(
    (delivery_id: string) =>
      fp().call(
        fp().api.POST(`${ONE}/deliveries/{delivery_id}/redeliver`, {
          params: { path: { project_id, endpoint_id, delivery_id } },
        }),
      ),
    [deliveriesKey(project_id, endpoint_id)],
  );
  return (
    <div id="deliveries">
      <h3 className="address">Deliveries to {endpoint.url}</h3>
      <Problem error={redeliver.error} />
      <Loaded query={deliveries}>
        {(page) =>
          page.data.length === 0 ? (
            <p className="muted">No delivery yet.</p>
          ) : (
            <Table head={['Event', 'Status', 'Tries', 'Answer', 'Time']} actions stacked>
              {page.data.map((d) => (
                <tr key={d.id}>
                  <td>{d.event_type}</td>
                  <td>
                    <span className={`badge status-${d.status}`}>{d.status}</span>
                  </td>
                  <td data-label="Tries">{d.attempts.length}</td>
                  <td data-label="Answer">{answer(d)}</td>
                  <td data-label="Time">{dateTime(d.created_at)}</td>
                  <td>
                    <button
                      type="button"
                      disabled={redeliver.isPending}
                      onClick={() => redeliver.mutate(d.id)}
                    >
                      Redeliver
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Loaded>
    </div>
  );
}
