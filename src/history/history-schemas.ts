// Schemas of a frame's history: log lines and events, as pages (CONTRACT 1 and 5). The same
// routes stream with `Accept: text/event-stream`; each streamed `data:` is one item below.
import { Type } from 'typebox';
import { ListOf, ListQuery, Nullable, Timestamp } from '../http/schemas.ts';

export const LogsQuery = Type.Object({
  since: Type.Optional(
    Type.String({ format: 'date-time', description: 'RFC 3339: only lines at or after this time' }),
  ),
  // Logs come in bulk, so pages are larger than the usual 1..200.
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
  tail: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1000,
      description: 'The newest N lines, oldest first (like `heroku logs -n N`); not with cursor',
    }),
  ),
});

// Events page like every list (CONTRACT 1).
export const EventsQuery = ListQuery;

export const LogLine = Type.Object(
  {
    id: Type.String({ description: 'Opaque, increasing; the stream sends it as the event id' }),
    replica: Type.Integer(),
    at: Timestamp,
    line: Type.String(),
  },
  { title: 'LogLine' },
);
export const LogPage = ListOf(LogLine);

const frameEventFields = {
  id: Type.String(),
  type: Type.String({
    description: 'created, updated, start, stop, deploy, status, replica, backoff_tripped, …',
  }),
  status: Nullable(Type.String()),
  status_reason: Nullable(Type.String()),
  detail: Type.Unknown(),
  actor_id: Nullable(Type.String()),
  at: Timestamp,
};
export const FrameEvent = Type.Object(frameEventFields, { title: 'FrameEvent' });
export const FrameEventPage = ListOf(FrameEvent);

// A project's events: a frame's, with the frame they belong to. The space filter is any string:
// like an id in a path, one that names no space of the project is a 404, not a 422.
export const ProjectEventsQuery = Type.Object({
  ...ListQuery.properties,
  space_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});
export const ProjectEvent = Type.Object(
  { ...frameEventFields, frame_id: Type.String(), space_id: Type.String() },
  { title: 'ProjectEvent' },
);
export const ProjectEventPage = ListOf(ProjectEvent);
