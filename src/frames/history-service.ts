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
import { AppError } from '../http/errors.ts';
import { decodeCursor, iso, toPage } from '../http/schemas.ts';
import type { EventStream } from '../http/sse.ts';
import type { FramesService } from './frames-service.ts';

const STREAM_TAIL = 100; // lines a log stream starts with, unless told otherwise
const BATCH = 500; // rows per query while catching up
const RECHECK_MS = 15_000; // how often a stream re-checks that the frame exists and is still visible
const POLL_MS = 1_000; // without LISTEN/NOTIFY, streams poll

export interface LogsQuery {
  since?: string;
  limit: number;
  cursor?: string;
  tail?: number;
}
export interface LogsFollow {
  since?: string;
  cursor?: string;
  tail?: number;
  lastEventId?: string;
}
export interface EventsFollow {
  cursor?: string;
  lastEventId?: string;
}

/** A stream whose access was checked; `run` pumps rows into an opened event stream. */
export interface Follow {
  run(stream: EventStream, onError: (err: unknown) => void): void;
}

type LogRow = { id: string | number; replica: number; at: Date; line: string };
type EventRow = {
  id: string;
  type: string;
  status: string | null;
  status_reason: string | null;
  detail: unknown;
  actor_id: string | null;
  at: Date;
};

const presentLog = (r: LogRow) => ({
  id: String(r.id),
  replica: r.replica,
  at: iso(r.at),
  line: r.line,
});
const presentEvent = (r: EventRow) => ({
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

interface FeedSpec<R> {
  channel: Channel;
  event: string;
  frameId: string;
  agentId: string | null;
  userId: string;
  projectId: string;
  /** The token the stream was opened with: a revoked or expired one ends it. */
  tokenId: string;
  /** Where live rows begin; read after subscribing, so nothing committed in between is lost. */
  start(): Promise<string | undefined>;
  /** Rows after `position` (all when undefined), oldest first. */
  after(position: string | undefined, limit: number): Promise<R[]>;
  key(r: R): string;
  present(r: R): unknown;
}

export function createHistoryService({ db, clock, access, frames, notifier }: Deps) {
  function logRows(
    frameId: string,
    o: { after?: string; since?: Date; limit: number; newest?: boolean; offset?: number },
  ) {
    let q = db
      .selectFrom('frame_logs')
      .select(['id', 'replica', 'at', 'line'])
      .where('frame_id', '=', frameId);
    if (o.after !== undefined) q = q.where('id', '>', o.after);
    if (o.since) q = q.where('at', '>=', o.since);
    q = q.orderBy('id', o.newest ? 'desc' : 'asc').limit(o.limit);
    if (o.offset) q = q.offset(o.offset);
    return q.execute() as Promise<LogRow[]>;
  }

  function eventRows(frameId: string, after: string | undefined, limit: number) {
    let q = db
      .selectFrom('frame_events')
      .select(['id', 'type', 'status', 'status_reason', 'detail', 'actor_id', 'at'])
      .where('frame_id', '=', frameId);
    if (after !== undefined) q = q.where('id', '>', after);
    return q.orderBy('id').limit(limit).execute() as Promise<EventRow[]>;
  }

  /** Why a stream must end, if it must: the frame is gone, its token is revoked or expired, or the caller lost access. */
  async function endReason<R>(
    spec: FeedSpec<R>,
    recheckAccess: boolean,
  ): Promise<string | undefined> {
    const frame = await db
      .selectFrom('frames')
      .select('id')
      .where('id', '=', spec.frameId)
      .executeTakeFirst();
    if (!frame) return 'frame_deleted';
    if (!recheckAccess) return undefined;
    const token = await db
      .selectFrom('access_tokens')
      .select(['revoked_at', 'expires_at'])
      .where('id', '=', spec.tokenId)
      .executeTakeFirst();
    if (!token || token.revoked_at || (token.expires_at && token.expires_at <= clock.now()))
      return 'token_revoked';
    try {
      await access.requireProject(spec.userId, spec.projectId, 'project.read');
      return undefined;
    } catch (err) {
      if (err instanceof AppError && (err.status === 403 || err.status === 404))
        return 'access_revoked';
      throw err;
    }
  }

  /**
   * Streams rows as they are committed. Notifications only wake the pump; it reads what is new
   * after the last row sent. Bursts coalesce: one query at a time, and a wake-up during a query
   * makes the pump run once more.
   */
  function follow<R>(spec: FeedSpec<R>): Follow {
    return {
      run(stream, onError) {
        let position: string | undefined;
        let busy = true; // until start() has answered
        let again = false;
        let recheck = false;
        const wake = () => {
          if (busy) again = true;
          else void pump();
        };
        const offs = notifier
          ? [
              notifier.subscribe(spec.channel, spec.frameId, wake),
              // Deleting a frame notifies only its agent; that wake-up finds the frame gone.
              ...(spec.agentId ? [notifier.subscribe('frameplane_agent', spec.agentId, wake)] : []),
              // A logout or revocation of this token (on any instance) ends the stream at once.
              notifier.subscribe('frameplane_tokens', spec.tokenId, () => {
                recheck = true;
                wake();
              }),
            ]
          : [];
        const timers = [
          setInterval(() => {
            recheck = true;
            wake();
          }, RECHECK_MS),
        ];
        if (!notifier) timers.push(setInterval(wake, POLL_MS));
        for (const t of timers) t.unref();
        stream.onClose(() => {
          for (const off of offs) off();
          for (const t of timers) clearInterval(t);
        });

        const fail = (err: unknown) => {
          if (!stream.closed) {
            onError(err);
            stream.close();
          }
        };

        async function pump() {
          busy = true;
          try {
            do {
              again = false;
              let sent = 0;
              for (;;) {
                const rows = await spec.after(position, BATCH);
                if (stream.closed) return;
                for (const r of rows) {
                  position = spec.key(r);
                  stream.send(spec.event, spec.present(r), position);
                }
                sent += rows.length;
                await stream.drained();
                if (rows.length < BATCH || stream.closed) break;
              }
              // A wake-up that brought nothing may be a deletion; the periodic one re-checks access too.
              const full = recheck;
              recheck = false;
              const reason = sent === 0 || full ? await endReason(spec, full) : undefined;
              if (reason) {
                stream.send('end', { reason });
                stream.close();
                return;
              }
            } while (again && !stream.closed);
          } catch (err) {
            fail(err);
          } finally {
            busy = false;
          }
        }

        spec.start().then((p) => {
          position = p;
          busy = false;
          return pump();
        }, fail);
      },
    };
  }

  async function open(actor: Actor, projectId: string, spaceId: string, frameId: string) {
    await access.requireProject(actor.userId, projectId, 'project.read');
    return frames.load(projectId, spaceId, frameId);
  }

  return {
    /** Log lines, oldest first; `tail` gives the newest N instead. */
    async logs(actor: Actor, projectId: string, spaceId: string, frameId: string, q: LogsQuery) {
      await open(actor, projectId, spaceId, frameId);
      const since = q.since ? new Date(q.since) : undefined;
      if (q.tail !== undefined) {
        if (q.cursor !== undefined)
          throw invalid(
            'tail',
            'tail_with_cursor',
            'reads the newest lines and cannot be combined with cursor',
          );
        const rows = await logRows(frameId, { since, limit: q.tail, newest: true });
        return { data: rows.reverse().map(presentLog), next_cursor: null };
      }
      const after = logPosition(q.cursor, 'cursor');
      const rows = await logRows(frameId, { after, since, limit: q.limit + 1 });
      return toPage(rows, q.limit, (r) => [String(r.id)], presentLog);
    },

    /** Frame events in creation order. */
    async events(
      actor: Actor,
      projectId: string,
      spaceId: string,
      frameId: string,
      limit: number,
      cursor?: string,
    ) {
      await open(actor, projectId, spaceId, frameId);
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
      const since = o.since ? new Date(o.since) : undefined;
      const tail = o.tail ?? (since ? undefined : STREAM_TAIL);
      return follow<LogRow>({
        channel: 'frameplane_logs',
        event: 'log',
        frameId,
        agentId: frame.agent_id,
        userId: actor.userId,
        tokenId: actor.tokenId,
        projectId,
        async start() {
          if (resume !== undefined || tail === undefined) return resume;
          // Begin just before the tail-th newest line; with fewer lines, from the first.
          const [nth] = await logRows(frameId, { since, limit: 1, newest: true, offset: tail - 1 });
          return nth ? String(BigInt(nth.id) - 1n) : undefined;
        },
        // `since` keeps filtering live lines: an agent's late report of older lines stays out.
        after: (position, limit) => logRows(frameId, { after: position, since, limit }),
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
        channel: 'frameplane_frame_events',
        event: 'frame_event',
        frameId,
        agentId: frame.agent_id,
        userId: actor.userId,
        tokenId: actor.tokenId,
        projectId,
        async start() {
          if (resume !== undefined) return resume;
          const last = await db
            .selectFrom('frame_events')
            .select('id')
            .where('frame_id', '=', frameId)
            .orderBy('id', 'desc')
            .limit(1)
            .executeTakeFirst();
          return last?.id;
        },
        after: (position, limit) => eventRows(frameId, position, limit),
        key: (r) => r.id,
        present: presentEvent,
      });
    },
  };
}

export type HistoryService = ReturnType<typeof createHistoryService>;
