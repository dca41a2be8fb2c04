// Schemas of a frame's history: log lines and events, as pages (CONTRACT 1 and 5). The same
// routes stream with `Accept: text/event-stream`; each streamed `data:` is one item below.
import { Type } from 'typebox';
import { ListOf, ListQuery, Nullable, Timestamp } from '../http/schemas.ts';

export const LogSource = Type.Union(
  [Type.Literal('app'), Type.Literal('build'), Type.Literal('edge')],
  {
    description:
      "Where a line came from: the app's replicas, the build (fetch, build output, the agent's " +
      'notes on a deployment) or the edge',
  },
);

/** Which lines: the filters of a page, a stream and a download alike. */
const logFilters = {
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Only lines containing this text, ignoring case; `%`, `_` and `\\` are literal',
    }),
  ),
  since: Type.Optional(
    Type.String({ format: 'date-time', description: 'RFC 3339: only lines at or after this time' }),
  ),
  until: Type.Optional(
    Type.String({ format: 'date-time', description: 'RFC 3339: only lines before this time' }),
  ),
  replica: Type.Optional(Type.Integer({ minimum: 0, maximum: 999 })),
  source: Type.Optional(LogSource),
};

export const LogsQuery = Type.Object({
  ...logFilters,
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

export const LogsDownloadQuery = Type.Object(logFilters);
export const LogsText = Type.String({
  description: 'One line a line: `<at> <source>[<replica>] <line>`, oldest first',
});

// Events page like every list (CONTRACT 1); `tail` reads the newest, as for logs (a page that
// opens on the recent history, then follows the stream from the newest one's id).
export const EventsQuery = Type.Object({
  ...ListQuery.properties,
  tail: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 200,
      description: 'The newest N events, oldest first; not with cursor',
    }),
  ),
});

export const LogLine = Type.Object(
  {
    id: Type.String({ description: 'Opaque, increasing; the stream sends it as the event id' }),
    replica: Type.Integer(),
    at: Timestamp,
    line: Type.String(),
    source: LogSource,
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
