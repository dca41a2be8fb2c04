// The one statement of a stop or a start (frame-ops-service): the frame's change, its events
// and its audit record, written together or not at all; then the wake-ups.
import { type Selectable, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { Queryable } from '../db/database.ts';
import { compiledOnce } from '../db/compiled.ts';
import type { auditRow } from '../audit/audit-dal.ts';
import { type DesiredStateChange, payerBillingSql } from './frames-dal.ts';
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
  /**
   * Given (with `unchangedSince`), the statement also writes only if the caller's role and the
   * payer's billing are still those the change was decided on: the access versions the role
   * was read at (access/role-memo.ts) and the billing status (frame-ops-service fromMemory).
   */
  guard?: Guard;
  set: DesiredStateChange;
  newGeneration: boolean;
  /** In id order, the last the newest. */
  events: [NewFrameEvent, ...NewFrameEvent[]];
  audit?: ReturnType<typeof auditRow>;
}

export interface Guard {
  userId: string;
  userVersion: number;
  projectVersion: number;
  billing: 'active' | 'past_due';
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

type SetColumn = keyof DesiredStateChange;
type FrameColumns = Pick<Selectable<DB['frames']>, (typeof CHANGED)[number]> & {
  /** The row's new version (frames-dal frameOf). */
  row_version: string;
  /** As the write saw it: the answer shows the agent as it is, not as remembered. */
  agent_last_seen_at: Date | null;
};
type Bound = string | number | null;
type Statement = (q: Queryable, ...args: Bound[]) => Promise<Record<string, unknown>[]>;

/** The guard's condition (see OperationWrite), on the frame row being updated. */
const guarded = (user: Bound, userVersion: Bound, projectVersion: Bound, billing: Bound) =>
  sql<boolean>`exists (select from projects p join users cu on cu.id = ${user}
    where p.id = frames.project_id and cu.access_version = ${userVersion}
    and p.access_version = ${projectVersion} and ${payerBillingSql('p')} = ${billing})`;

/**
 * The statement of one shape (which columns are set, a new generation or not, conditional,
 * guarded or neither), built and compiled by Kysely once (db/compiled.ts): a stop or a start has
 * a handful of shapes, and building the statement was a tenth of its CPU. The arguments: the
 * frame, its newest event, the row version, the events and the audit record (JSON), the guard's
 * four values, then each set value.
 */
function build(columns: SetColumn[], newGeneration: boolean, conditional: boolean, guard: boolean) {
  return compiledOnce(
    (
      q,
      frameId: Bound,
      newest: Bound,
      since: Bound,
      ev: Bound,
      au: Bound,
      user: Bound,
      userVersion: Bound,
      projectVersion: Bound,
      billing: Bound,
      ...values: Bound[]
    ) =>
      q
        .with('f', (c) => {
          let update = c
            .updateTable('frames')
            .set({
              ...Object.fromEntries(columns.map((k, i) => [k, values[i]])),
              // The frame's newest event is the last of ours (migrations/0016).
              last_event_id: newest as string,
              ...(newGeneration
                ? { generation: sql`generation + 1`, version: sql`version + 1` }
                : {}),
            })
            .where('id', '=', frameId as string);
          if (conditional) update = update.where(sql`xmin::text`, '=', since);
          if (guard) update = update.where(guarded(user, userVersion, projectVersion, billing));
          // Only what a stop or a start may change: the caller has the rest (its replicas and
          // deployments are large, and would cost parsing twice for nothing).
          return update.returning([
            ...CHANGED,
            sql<string>`xmin::text`.as('row_version'),
            sql<Date | null>`(select a.last_seen_at from agents a where a.id = frames.agent_id)`.as(
              'agent_last_seen_at',
            ),
          ]);
        })
        .with('e', (c) =>
          // Every column but xid, which comes from its default (the writing transaction's id).
          c
            .insertInto('frame_events')
            .columns(EVENT_COLUMNS)
            .expression(rowsFor('frame_events', ev, EVENT_COLUMNS)),
        )
        .with('a', (c) => c.insertInto('audit_events').expression(rowsFor('audit_events', au)))
        .selectFrom('f')
        .selectAll('f'),
  ) as unknown as Statement;
}

const statements = new Map<string, Statement>();

/** The columns written, or undefined when the frame was not (moved since, or gone). */
export async function writeOperation(q: Queryable, w: OperationWrite) {
  const events = w.events.map((e) => ({
    ...e,
    detail: e.detail && JSON.parse(e.detail),
    project_id: w.projectId,
    space_id: w.spaceId,
  }));
  const columns = Object.keys(w.set) as SetColumn[];
  const conditional = w.unchangedSince !== undefined;
  const g = w.guard;
  const shape = `${columns.join(',')}|${w.newGeneration}|${conditional}|${!!g}`;
  let statement = statements.get(shape);
  if (!statement) {
    statement = build(columns, w.newGeneration, conditional, !!g);
    statements.set(shape, statement);
  }
  const values = columns.map((k) => {
    const v = w.set[k];
    return v instanceof Date ? v.toISOString() : (v ?? null);
  });
  const rows = await statement(
    q,
    w.frameId,
    w.events[w.events.length - 1]?.id ?? null,
    w.unchangedSince ?? null,
    JSON.stringify(events),
    JSON.stringify(w.audit ? [w.audit] : []),
    g?.userId ?? null,
    g?.userVersion ?? null,
    g?.projectVersion ?? null,
    g?.billing ?? null,
    ...values,
  );
  return rows[0] as FrameColumns | undefined;
}

/**
 * `rows` as rows of `table`, if the frame was written (a row in `f`). A column a row does not
 * name is NULL, not its default: a column added later with a default must be set in the rows.
 */
const rowsFor = (
  table: 'frame_events' | 'audit_events',
  json: Bound,
  columns?: readonly string[],
) =>
  sql`select ${columns ? sql.join(columns.map((c) => sql.ref(`r.${c}`))) : sql`r.*`} from f,
    jsonb_populate_recordset(null::${sql.table(table)}, ${json}::jsonb) r`;

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
