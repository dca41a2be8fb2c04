// Schemas of a project's notification endpoints and their delivery log (docs/api.md,
// Notifications).
import { Type } from 'typebox';
import {
  IdParam,
  ListOf,
  Nullable,
  NullableEnum,
  NullableTimestamp,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import { NOTIFICATION_EVENTS } from './events.ts';

export const FORMATS = ['json', 'slack'] as const;
export const MAX_EVENTS = NOTIFICATION_EVENTS.length;

const EventName = StringEnum(NOTIFICATION_EVENTS, {
  description: `One of: ${NOTIFICATION_EVENTS.join(', ')}`,
});
const Events = Type.Array(EventName, {
  minItems: 1,
  maxItems: MAX_EVENTS,
  uniqueItems: true,
  description: 'The events this endpoint receives (a test event, `ping`, always may be sent)',
});
const Format = StringEnum(FORMATS, {
  description:
    '`json`: the event as JSON; `slack`: `{"text": "…"}`, a sentence for a Slack-compatible ' +
    'incoming webhook',
});
const Url = Type.String({
  format: 'uri',
  minLength: 1,
  maxLength: 2048,
  description:
    'An https:// URL (http:// only where the operator allows it), whose host is not a ' +
    'loopback, private or link-local address; checked again, resolved, at every delivery',
});

export const EndpointParams = Type.Object({
  project_id: IdParam('prj'),
  endpoint_id: IdParam('ntf'),
});
export const DeliveryParams = Type.Object({
  ...EndpointParams.properties,
  delivery_id: IdParam('dlv'),
});

export const EndpointBody = Type.Object(
  { url: Url, events: Events, format: Type.Optional(Format) },
  { title: 'NotificationEndpointBody', additionalProperties: false },
);
export const EndpointPatch = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    format: Type.Optional(Format),
    enabled: Type.Optional(
      Type.Boolean({
        description: 'false turns it off; true turns it back on and forgets its failures',
      }),
    ),
  },
  { title: 'NotificationEndpointPatch', additionalProperties: false, minProperties: 1 },
);

const endpointFields = {
  id: Type.String(),
  project_id: Type.String(),
  url: Type.String(),
  events: Type.Array(EventName),
  format: Format,
  enabled: Type.Boolean(),
  disabled_reason: NullableEnum(['manual', 'failing'], {
    description: '`manual`: an admin turned it off; `failing`: the service did, after failures',
  }),
  disabled_at: NullableTimestamp,
  consecutive_failures: Type.Integer({
    description: 'Failed tries in a row of automatic deliveries (0 after a success)',
  }),
  failing_since: NullableTimestamp,
  previous_secret_expires_at: {
    ...NullableTimestamp,
    description: 'Until then the secret before the last rotation signs too (a second v1)',
  },
  created_by: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const NotificationEndpoint = Type.Object(endpointFields, {
  title: 'NotificationEndpoint',
});
export const EndpointWithSecret = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({
      description: 'The signing secret (whsec_…), shown once: here and on rotation',
    }),
  },
  { title: 'NotificationEndpointWithSecret' },
);
export const EndpointList = ListOf(NotificationEndpoint);

/** The longest a rotated secret may go on signing. */
export const MAX_PREVIOUS_HOURS = 24;
export const SecretRotation = Type.Object(
  {
    expire_previous_in_hours: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_PREVIOUS_HOURS,
        default: 0,
        description:
          'Hours the old secret goes on signing next to the new one (a second v1 in each ' +
          'signature), so that receivers can change over; 0, the default, ends it at once',
      }),
    ),
  },
  { title: 'NotificationSecretRotation', additionalProperties: false },
);

export const NotificationEventBody = Type.Object(
  {
    id: Type.String({ description: 'The event (nev_…): the same in every try and redelivery' }),
    type: Type.String(),
    created_at: Timestamp,
    project: Type.Object({ id: Type.String(), name: Type.String() }),
    data: Type.Object({}, { additionalProperties: true, description: 'Per type (docs/api.md)' }),
  },
  { title: 'NotificationEventBody' },
);

export const NotificationAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    at: Timestamp,
    ok: Type.Boolean({ description: 'The receiver answered 2xx' }),
    status_code: Nullable(Type.Integer()),
    latency_ms: Type.Integer(),
    response_excerpt: Nullable(
      Type.String({ description: "The answer's first 1 KiB (UTF-8), null without an answer" }),
    ),
    error: Nullable(Type.String({ description: 'Why the try failed' })),
  },
  { title: 'NotificationAttempt' },
);

export const NotificationDelivery = Type.Object(
  {
    id: Type.String(),
    endpoint_id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    status: StringEnum(['pending', 'succeeded', 'failed']),
    manual: Type.Boolean({ description: 'A test event or a redelivery: tried once' }),
    redelivery_of: Nullable(Type.String()),
    next_attempt_at: NullableTimestamp,
    last_error: Nullable(Type.String()),
    created_at: Timestamp,
    finished_at: NullableTimestamp,
    attempts: Type.Array(NotificationAttempt, { description: 'Every try, oldest first' }),
    event: NotificationEventBody,
  },
  { title: 'NotificationDelivery' },
);
export const DeliveryList = ListOf(NotificationDelivery);
