// The Frameplane SDK: a typed client generated from the service's OpenAPI document.
export { createFrameplane } from './client.ts';
export type { Api, Frameplane, FrameplaneOptions, FrameRef, Page, Schemas } from './client.ts';
export { FrameplaneError } from './errors.ts';
export { slugOf } from './slug.ts';
export { NOTIFICATION_EVENTS, type NotificationEvent } from './notification-events.ts';
export type { FieldError, Problem } from './errors.ts';
export type { StreamEvent } from './sse.ts';
export type { components, operations, paths } from './schema.d.ts';
