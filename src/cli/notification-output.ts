// What `frameplane notifications` prints: endpoints, deliveries and their tries, the secret.
import type { Schemas } from '../sdk/index.ts';
import { details, note, paint, table } from './output.ts';

type Endpoint = Schemas['NotificationEndpoint'];
type Delivery = Schemas['NotificationDelivery'];

const state = (e: Endpoint) =>
  e.enabled ? 'on' : e.disabled_reason === 'failing' ? 'off (failing)' : 'off';

export const endpointRow = (e: Endpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events.join(', '),
  format: e.format,
  state: state(e),
  failures: e.consecutive_failures,
});

export function endpointTable(list: Endpoint[]) {
  table(list.map(endpointRow), ['id', 'url', 'events', 'format', 'state', 'failures'], {
    state: (v) => (v === 'on' ? 'green' : 'red'),
  });
}

/** A try in a few words: what the receiver answered, or why there was no answer. */
const tryText = (a: Delivery['attempts'][number]) =>
  a.status_code === null ? (a.error ?? 'failed') : `${a.status_code} in ${a.latency_ms} ms`;

const deliveryRow = (d: Delivery) => ({
  id: d.id,
  event: d.event_type,
  status: d.status,
  tries: d.attempts.length,
  'last try': d.attempts.length ? tryText(d.attempts.at(-1) as Delivery['attempts'][number]) : null,
  next: d.next_attempt_at,
  created: d.created_at,
});

const statusColour = (v: string) =>
  v === 'succeeded' ? 'green' : v === 'failed' ? 'red' : 'yellow';

export function deliveryTable(list: Delivery[]) {
  table(list.map(deliveryRow), ['id', 'event', 'status', 'tries', 'last try', 'next', 'created'], {
    status: statusColour,
  });
}

/** One delivery, then each of its tries with the start of the answer. */
export function showDelivery(d: Delivery) {
  const { tries: _, 'last try': __, ...row } = deliveryRow(d);
  details({ ...row, 'event id': d.event_id });
  table(
    d.attempts.map((a) => ({
      try: a.attempt,
      at: a.at,
      result: a.ok ? 'ok' : 'failed',
      answer: tryText(a),
      excerpt: a.response_excerpt?.replace(/\s+/g, ' ').slice(0, 60),
    })),
    ['try', 'at', 'result', 'answer', 'excerpt'],
    { result: (v) => (v === 'ok' ? 'green' : 'red') },
  );
}

export function showSecret(e: Endpoint & { secret: string }) {
  details({ ...endpointRow(e), secret: e.secret });
  note(
    paint(
      'The secret is shown only now: the receiver checks Frameplane-Signature with it ' +
        '(docs/api.md, Notifications).',
      'dim',
      process.stderr,
    ),
  );
  if (e.previous_secret_expires_at)
    note(`The previous secret signs too until ${e.previous_secret_expires_at}.`);
}
