// The one statement of a stop or a start (frame-ops-service): the frame's change, its events
// and its audit record, written together or not at all; then the wake-ups.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { auditRow } from '../audit/audit-dal.ts';
import type { DesiredStateChange } from './frames-dal.ts';
import type { NewFrameEvent } from './history-dal.ts';

export interface OperationWrite {
  frameId: string;
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

/** The frame row as written, or undefined when it was not (moved since, or gone). */
export async function writeOperation(q: Queryable, w: OperationWrite) {
  const events = w.events.map((e) => ({ ...e, detail: e.detail && JSON.parse(e.detail) }));
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
      return update.returningAll();
    })
    .with('e', (c) => c.insertInto('frame_events').expression(rowsFor('frame_events', events)))
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
const rowsFor = (table: 'frame_events' | 'audit_events', rows: unknown[]) =>
  sql`select r.* from f,
    jsonb_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::jsonb) r`;
