// Every event a notification endpoint may choose, as a list: the console's checkboxes. The
// OpenAPI schema has them as an enum, which the generated types keep only as a type; the keys
// below are checked against it both ways, so a new event fails the typecheck until it is here.
import type { Schemas } from './client.ts';

export type NotificationEvent = Schemas['NotificationEndpointBody']['events'][number];

const EVENTS: Record<NotificationEvent, true> = {
  'deploy.started': true,
  'deploy.succeeded': true,
  'deploy.failed': true,
  'frame.online': true,
  'frame.error': true,
  'frame.backoff_tripped': true,
  'frame.suspended': true,
  'domain.verified': true,
  'member.added': true,
  'member.removed': true,
};

/** In the order the API documents them. */
export const NOTIFICATION_EVENTS = Object.keys(EVENTS) as NotificationEvent[];
