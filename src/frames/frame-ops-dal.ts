// The one statement of a stop or a start (frame-ops-service): the frame's change, its events
// and its audit record, written together or not at all; then the wake-ups.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { auditRow } from '../audit/audit-dal.ts';
import type { DesiredStateChange } from './frames-dal.ts';
import type { NewFrameEvent } from './history-dal.ts';

export interface OperationWrite {
  frameId: string;
  /** The frame's project and space, copied onto its events (migrations/0017). */
  projectId: string;
  spaceId: string;
  /**
   * The frame row's version (xmin) as read. Given, the statement writes only if the row is
   * still that version: then nothing changed the frame, the facts of its status or its events
   * since (each of those moves the row, migrations/0005, 0006 and 0016). Otherwise the caller
   * holds the frame's lock.
   */
  unchangedSince?: string;
  set: DesiredStateChange;
  newGeneration: boolean;
  /** In id order, the last the newest. */
  events: [NewFrameEvent, ...NewFrameEvent[]];
  audit?: ReturnType<typeof auditRow>;
}

const CHANGED = [
  'desired_state',
  'updated_at',
  'crash_streak',
  'backoff_tripped_at',
  'last_status',
  'last_status_reason',
  'generation',
  'version',
  'last_event_id',
] as const;

/** The columns written, or undefined when the frame was not (moved since, or gone). */
export async function writeOperation(q: Queryable, w: OperationWrite) {
  const events = w.events.map((e) => ({
    ...e,
    detail: e.detail && JSON.parse(e.detail),
    project_id: w.projectId,
    space_id: w.spaceId,
  }));
  const newest = w.events[w.events.length - 1]?.id;
  return q
    .with('f', (c) => {
      let update = c
        .updateTable('frames')
        .set({
          ...w.set,
          // The frame's newest event is the last of ours (migrations/0016).
          last_event_id: newest,
          ...(w.newGeneration
            ? { generation: sql`generation + 1`, version: sql`version + 1` }
            : {}),
        })
        .where('id', '=', w.frameId);
      if (w.unchangedSince) update = update.where(sql`xmin::text`, '=', w.unchangedSince);
      // Only what a stop or a start may change: the caller has the rest (its replicas and
      // deployments are large, and would cost parsing twice for nothing).
      return update.returning(CHANGED);
    })
    .with('e', (c) =>
      // Every column but xid, which comes from its default (the writing transaction's id).
      c
        .insertInto('frame_events')
        .columns(EVENT_COLUMNS)
        .expression(rowsFor('frame_events', events, EVENT_COLUMNS)),
    )
    .with('a', (c) =>
      c.insertInto('audit_events').expression(rowsFor('audit_events', w.audit ? [w.audit] : [])),
    )
    .selectFrom('f')
    .selectAll('f')
    .executeTakeFirst();
}

/**
 * `rows` as rows of `table`, if the frame was written (a row in `f`). A column a row does not
 * name is NULL, not its default: a column added later with a default must be set in the rows.
 */
const rowsFor = (
  table: 'frame_events' | 'audit_events',
  rows: unknown[],
  columns?: readonly string[],
) =>
  sql`select ${columns ? sql.join(columns.map((c) => sql.ref(`r.${c}`))) : sql`r.*`} from f,
    jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb) r`;

const EVENT_COLUMNS = [
  'id',
  'frame_id',
  'type',
  'status',
  'status_reason',
  'detail',
  'actor_id',
  'at',
  'project_id',
  'space_id',
] as const;
