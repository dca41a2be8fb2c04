// A frame's history: its log lines (frame_logs) and its events (frame_events).
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { LogSource } from '../db/schema.ts';
import { wakeAfterCommit } from '../db/waker.ts';

export type LogRow = { id: number; replica: number; at: Date; line: string; source: LogSource };
export type EventRow = {
  id: string;
  type: string;
  status: string | null;
  status_reason: string | null;
  detail: unknown;
  actor_id: string | null;
  at: Date;
};

/** Which lines of a frame: every filter is optional, and they combine. */
export interface LogFilter {
  /** A substring of the line, ignoring case. */
  q?: string;
  since?: Date;
  until?: Date;
  replica?: number;
  source?: LogSource;
}

export interface LogRange extends LogFilter {
  /** Lines after this id (digits: a client's position, checked by the service). */
  after?: string;
  limit: number;
  /** Newest first instead of oldest first. */
  newest?: boolean;
  offset?: number;
}

/** `text` as an ILIKE pattern that matches it anywhere: its own wildcards taken literally. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * A frame's lines by id. `q` is served by frame_logs_line_trgm (pg_trgm, migrations/0029),
 * which the planner ANDs with frame_logs_frame; a `q` under three characters has no trigram
 * and reads the frame's lines, which the retention bounds.
 */
export function logRows(q: Queryable, frameId: string, o: LogRange) {
  let query = q
    .selectFrom('frame_logs')
    .select(['id', 'replica', 'at', 'line', 'source'])
    .where('frame_id', '=', frameId);
  if (o.after !== undefined) query = query.where('id', '>', Number(o.after));
  if (o.since) query = query.where('at', '>=', o.since);
  if (o.until) query = query.where('at', '<', o.until);
  if (o.replica !== undefined) query = query.where('replica', '=', o.replica);
  if (o.source) query = query.where('source', '=', o.source);
  if (o.q !== undefined) query = query.where('line', 'ilike', containing(o.q));
  query = query.orderBy('id', o.newest ? 'desc' : 'asc').limit(o.limit);
  if (o.offset) query = query.offset(o.offset);
  return query.execute() as Promise<LogRow[]>;
}

/** Events after `after` (all when undefined), oldest first; `newest`: newest first. */
export function eventRows(
  q: Queryable,
  frameId: string,
  after: string | undefined,
  limit: number,
  newest = false,
) {
  let query = q
    .selectFrom('frame_events')
    .select(['id', 'type', 'status', 'status_reason', 'detail', 'actor_id', 'at'])
    .where('frame_id', '=', frameId);
  if (after !== undefined) query = query.where('id', '>', after);
  return query
    .orderBy('id', newest ? 'desc' : 'asc')
    .limit(limit)
    .execute() as Promise<EventRow[]>;
}

export async function newestEventId(q: Queryable, frameId: string) {
  const last = await q
    .selectFrom('frame_events')
    .select('id')
    .where('frame_id', '=', frameId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return last?.id;
}

/**
 * The frame's newest event id, read under the frame's row lock: writers of one frame's events
 * queue here, so a new id can be made to sort after every committed one.
 */
export async function newestEventIdLocked(q: Queryable, frameId: string) {
  // On the row (migrations/0016), so it is current even when this statement waited for the lock.
  const row = await q
    .selectFrom('frames')
    .select('last_event_id')
    .where('id', '=', frameId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  return row?.last_event_id ?? undefined;
}

export interface NewFrameEvent {
  id: string;
  frame_id: string;
  type: string;
  status: string | null;
  status_reason: string | null;
  /** JSON text, or null. */
  detail: string | null;
  actor_id: string | null;
  at: Date;
}

/**
 * The event, the frame's newest event id (migrations/0016) and the notification (delivered on
 * commit) in one statement. The caller made the id sort after the frame's newest, under its lock.
 */
export async function insertFrameEvent(q: Queryable, event: NewFrameEvent) {
  await q
    .with('e', (w) =>
      w
        .insertInto('frame_events')
        .values({ ...event, ...frameScope(event.frame_id) })
        .returning('frame_id'),
    )
    .with('newest', (w) =>
      w.updateTable('frames').set({ last_event_id: event.id }).where('id', '=', event.frame_id),
    )
    .selectFrom('e')
    .select('e.frame_id')
    .execute();
  await wakeAfterCommit(q, 'frameplane_frame_events', event.frame_id);
}

/** The frame's project and space, copied onto its events (migrations/0017). */
const frameScope = (frameId: string) => ({
  project_id: sql<string>`(select project_id from frames where id = ${frameId})`,
  space_id: sql<string>`(select space_id from frames where id = ${frameId})`,
});

export async function frameExists(q: Queryable, frameId: string) {
  const f = await q.selectFrom('frames').select('id').where('id', '=', frameId).executeTakeFirst();
  return f !== undefined;
}

/** A token's revocation and expiry; the caller judges expiry by its own clock. */
export function tokenState(q: Queryable, tokenId: string) {
  return q
    .selectFrom('access_tokens')
    .select(['revoked_at', 'expires_at'])
    .where('id', '=', tokenId)
    .executeTakeFirst();
}
