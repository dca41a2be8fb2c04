// A project's events: the events of all its frames, in the order of migrations/0017 (the
// writing transaction's id, then the event id), read from the project's or the space's index.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { EventRow } from './history-dal.ts';

/** A place in a project's events: after the event `id` of transaction `xid` (digits). */
export interface ProjectPosition {
  xid: string;
  /** An event id, or `evt_` for before every event of `xid`. */
  id: string;
}

export type ProjectEventRow = EventRow & {
  frame_id: string;
  space_id: string;
  xid: string;
  /** Written by a transaction older than every one still running: no row can come before it. */
  settled: boolean;
};

/**
 * The events after `after` (all when undefined), in order. Unsettled rows sort after every
 * settled one (their xid is at least the horizon), so the settled ones are a prefix.
 */
export function projectEventRows(
  q: Queryable,
  projectId: string,
  spaceId: string | undefined,
  after: ProjectPosition | undefined,
  limit: number,
) {
  return projectEventsQuery(q, projectId, spaceId, after, limit).execute() as Promise<
    ProjectEventRow[]
  >;
}

/** The query of projectEventRows (its plan is checked in test/frames/project-events.test.ts). */
export function projectEventsQuery(
  q: Queryable,
  projectId: string,
  spaceId: string | undefined,
  after: ProjectPosition | undefined,
  limit: number,
) {
  let query = q
    .selectFrom('frame_events')
    .select(['id', 'type', 'status', 'status_reason', 'detail', 'actor_id', 'at'])
    .select(['frame_id', 'space_id', sql<string>`xid::text`.as('xid')])
    .select(sql<boolean>`xid < pg_snapshot_xmin(pg_current_snapshot())`.as('settled'))
    .where('project_id', '=', projectId);
  if (spaceId !== undefined) query = query.where('space_id', '=', spaceId);
  // A row comparison, so that the index range starts right after the position.
  if (after !== undefined)
    query = query.where(sql<boolean>`(xid, id) > (${after.xid}::xid8, ${after.id})`);
  // By the column, not the text of it selected above under the same name.
  return query.orderBy('frame_events.xid').orderBy('frame_events.id').limit(limit);
}

/** The oldest transaction still running: every event written from now on has this xid or a larger one. */
export async function eventHorizon(q: Queryable) {
  const { rows } = await sql<{
    xmin: string;
  }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(q);
  return rows[0]?.xmin ?? '0';
}

export async function projectExists(q: Queryable, projectId: string) {
  const p = await q
    .selectFrom('projects')
    .select('id')
    .where('id', '=', projectId)
    .executeTakeFirst();
  return p !== undefined;
}
