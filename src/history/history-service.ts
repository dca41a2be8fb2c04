// A frame's history (CONTRACT 5): its log lines (frame_logs, sent by agents in their sync) and
// its events (frame_events: operations and status changes). Reads are keyset pages. Follows
// stream every row after a position: a position is the id of the last row sent (log ids come
// from a sequence, event ids are time-ordered), so a reconnecting client's Last-Event-ID
// resumes exactly where it stopped.
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Channel, Notifier } from '../db/notifier.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import { AppError } from '../errors.ts';
import { iso } from '../http/schemas.ts';
import { decodeCursor, toPage } from '../paging.ts';
import type { FramesService } from '../frames/frames-service.ts';
import * as dal from './history-dal.ts';
import type { EventRow, LogFilter, LogRange, LogRow } from './history-dal.ts';
import type { LogSource } from '../db/schema.ts';
import { logText } from './logs-download.ts';
import { createFollower, type Follow } from './history-follow.ts';

export type { Follow } from './history-follow.ts';

const STREAM_TAIL = 100; // lines a log stream starts with, unless told otherwise

/** The filters of GET …/logs as sent: times are RFC 3339 text, checked by the schema. */
export interface LogsFilter {
  q?: string;
  since?: string;
  until?: string;
  replica?: number;
  source?: LogSource;
}
export interface LogsQuery extends LogsFilter {
  limit: number;
  cursor?: string;
  tail?: number;
}
export interface LogsFollow extends LogsFilter {
  cursor?: string;
  tail?: number;
  lastEventId?: string;
}
export interface EventsQuery {
  limit: number;
  cursor?: string;
  tail?: number;
}
export interface EventsFollow {
  cursor?: string;
  lastEventId?: string;
}

const presentLog = (r: LogRow) => ({
  id: String(r.id),
  replica: r.replica,
  at: iso(r.at),
  line: r.line,
  source: r.source,
});

const filterOf = (f: LogsFilter): LogFilter => ({
  q: f.q,
  since: f.since ? new Date(f.since) : undefined,
  until: f.until ? new Date(f.until) : undefined,
  replica: f.replica,
  source: f.source,
});
export const presentEvent = (r: EventRow) => ({
  id: r.id,
  type: r.type,
  status: r.status,
  status_reason: r.status_reason,
  detail: r.detail ?? null,
  actor_id: r.actor_id,
  at: iso(r.at),
});

const invalid = (path: string, code: string, message: string) =>
  new AppError(422, code, 'Unprocessable content', `${path}: ${message}`, [{ path, message }]);

const tailWithCursor = (what: 'lines' | 'events') =>
  invalid(
    'tail',
    'tail_with_cursor',
    `reads the newest ${what} and cannot be combined with cursor`,
  );

/** A log position from a client: digits only, since it reaches a bigint comparison. */
function logPosition(
  value: string | undefined,
  from: 'cursor' | 'Last-Event-ID',
): string | undefined {
  const v = from === 'cursor' ? decodeCursor(value, 1)?.[0] : value;
  if (v === undefined || /^\d{1,18}$/.test(v)) return v;
  throw from === 'cursor'
    ? invalid('cursor', 'invalid_cursor', 'is not a valid cursor')
    : invalid('Last-Event-ID', 'invalid_last_event_id', 'is not a log line id');
}

function eventPosition(
  value: string | undefined,
  from: 'cursor' | 'Last-Event-ID',
): string | undefined {
  const v = from === 'cursor' ? decodeCursor(value, 1)?.[0] : value;
  if (v === undefined || /^evt_[0-9A-Za-z]{1,58}$/.test(v)) return v;
  throw from === 'cursor'
    ? invalid('cursor', 'invalid_cursor', 'is not a valid cursor')
    : invalid('Last-Event-ID', 'invalid_last_event_id', 'is not an event id');
}

interface Deps {
  clock: Clock;
  db: Database;
  access: AccessService;
  frames: Pick<FramesService, 'load'>;
  notifier?: Notifier;
}

export function createHistoryService({ db, clock, access, frames, notifier }: Deps) {
  const follow = createFollower({ db, clock, access, notifier });
  const logRows = (frameId: string, o: LogRange) => dal.logRows(db, frameId, o);
  const eventRows = (frameId: string, after: string | undefined, limit: number) =>
    dal.eventRows(db, frameId, after, limit);

  /** What a follow of one frame shares: its wake-ups, its end and the caller. */
  const frameFeed = (
    channel: Channel,
    frameId: string,
    agentId: string | null,
    actor: Actor,
    projectId: string,
  ) => ({
    wakeOn: [
      [channel, frameId],
      // Deleting a frame notifies only its agent; that wake-up finds the frame gone.
      ...(agentId ? [['frameplane_agent', agentId]] : []),
    ] as Array<[Channel, string]>,
    gone: async () => ((await dal.frameExists(db, frameId)) ? undefined : 'frame_deleted'),
    userId: actor.userId,
    tokenId: actor.tokenId,
    projectId,
  });

  async function open(actor: Actor, projectId: string, spaceId: string, frameId: string) {
    await access.requireProject(actor.userId, projectId, 'project.read');
    return frames.load(projectId, spaceId, frameId);
  }

  return {
    /** Log lines, oldest first; `tail` gives the newest N instead. */
    async logs(actor: Actor, projectId: string, spaceId: string, frameId: string, q: LogsQuery) {
      await open(actor, projectId, spaceId, frameId);
      const filter = filterOf(q);
      if (q.tail !== undefined) {
        if (q.cursor !== undefined) throw tailWithCursor('lines');
        const rows = await logRows(frameId, { ...filter, limit: q.tail, newest: true });
        return { data: rows.reverse().map(presentLog), next_cursor: null };
      }
      const after = logPosition(q.cursor, 'cursor');
      const rows = await logRows(frameId, { ...filter, after, limit: q.limit + 1 });
      return toPage(rows, q.limit, (r) => [String(r.id)], presentLog);
    },

    /**
     * The matching lines as text, oldest first, read a page at a time after access is checked:
     * the caller streams it, so a download never holds the frame's lines in memory.
     */
    async downloadLogs(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      f: LogsFilter,
    ) {
      const frame = await open(actor, projectId, spaceId, frameId);
      const filter = filterOf(f);
      return {
        name: frame.name,
        text: logText((after, limit) => logRows(frameId, { ...filter, after, limit })),
      };
    },

    /** Frame events in creation order; `tail` gives the newest N instead (still oldest first). */
    async events(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      q: EventsQuery,
    ) {
      const { limit, cursor, tail } = q;
      await open(actor, projectId, spaceId, frameId);
      if (tail !== undefined) {
        if (cursor !== undefined) throw tailWithCursor('events');
        const rows = await dal.eventRows(db, frameId, undefined, tail, true);
        return { data: rows.reverse().map(presentEvent), next_cursor: null };
      }
      const rows = await eventRows(frameId, eventPosition(cursor, 'cursor'), limit + 1);
      return toPage(rows, limit, (r) => [r.id], presentEvent);
    },

    /**
     * Follows the logs: after Last-Event-ID or the cursor when given; otherwise the newest
     * `tail` lines (100 by default), or with `since` alone every line from then on.
     */
    async followLogs(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      o: LogsFollow,
    ): Promise<Follow> {
      const frame = await open(actor, projectId, spaceId, frameId);
      const resume =
        o.lastEventId !== undefined
          ? logPosition(o.lastEventId, 'Last-Event-ID')
          : logPosition(o.cursor, 'cursor');
      const filter = filterOf(o);
      const tail = o.tail ?? (filter.since ? undefined : STREAM_TAIL);
      return follow<LogRow>({
        ...frameFeed('frameplane_logs', frameId, frame.agent_id, actor, projectId),
        event: 'log',
        async start() {
          if (resume !== undefined || tail === undefined) return resume;
          // Begin just before the tail-th newest line; with fewer lines, from the first.
          const nthNewest = { ...filter, limit: 1, newest: true, offset: tail - 1 };
          const [nth] = await logRows(frameId, nthNewest);
          return nth ? String(nth.id - 1) : undefined;
        },
        // The filters keep applying to live lines: with `since`, an agent's late report of
        // older lines stays out.
        after: async (position, limit) => ({
          rows: await logRows(frameId, { ...filter, after: position, limit }),
        }),
        key: (r) => String(r.id),
        present: presentLog,
      });
    },

    /** Follows the events: after Last-Event-ID or the cursor when given; otherwise only new ones. */
    async followEvents(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      o: EventsFollow,
    ): Promise<Follow> {
      const frame = await open(actor, projectId, spaceId, frameId);
      const resume =
        o.lastEventId !== undefined
          ? eventPosition(o.lastEventId, 'Last-Event-ID')
          : eventPosition(o.cursor, 'cursor');
      return follow<EventRow>({
        ...frameFeed('frameplane_frame_events', frameId, frame.agent_id, actor, projectId),
        event: 'frame_event',
        async start() {
          return resume ?? (await dal.newestEventId(db, frameId));
        },
        after: async (position, limit) => ({ rows: await eventRows(frameId, position, limit) }),
        key: (r) => r.id,
        present: presentEvent,
      });
    },
  };
}

export type HistoryService = ReturnType<typeof createHistoryService>;
