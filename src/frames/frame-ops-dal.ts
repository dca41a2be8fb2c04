// The one statement of stops and starts (frame-ops-service): each frame's change, its events
// and its audit record, written together or not at all; then the wake-ups. Several stops and
// starts of different frames share one statement under load (db/coalesce.ts).
import { type Selectable, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { Database, Queryable } from '../db/database.ts';
import { compiledOnce } from '../db/compiled.ts';
import { coalesced } from '../db/coalesce.ts';
import type { auditRow } from '../audit/audit-dal.ts';
import { payerBillingSql } from './frames-dal.ts';
import type { NewFrameEvent } from '../history/history-dal.ts';

/** What a stop or a start sets on the frame, computed from the row as read. */
export interface FrameChange {
  desired_state: string;
  /** Null keeps the row's (a no-op changes nothing; a Date would also cut its microseconds). */
  updated_at: Date | null;
  /** A start clears the crash streak and a back-off trip. */
  clears_backoff: boolean;
  last_status: string | null;
  last_status_reason: string | null;
  generation: number;
  version: number;
}

export interface OperationWrite {
  frameId: string;
  /** The frame's project and space, copied onto its events (migrations/0017). */
  projectId: string;
  spaceId: string;
  /**
   * The frame row's version (xmin) as read. Given, the statement writes only if the row is
   * still that version: then nothing changed the frame, the facts of its status or its events
   * since (each of those moves the row, migrations/0005, 0006 and 0016). Otherwise the caller
   * holds the frame's lock. Either way the row is as read, so `set` is absolute: a new
   * generation is the generation read plus one.
   */
  unchangedSince?: string;
  /**
   * Given (with `unchangedSince`), the statement also writes only if the caller's role and the
   * payer's billing are still those the change was decided on: the access versions the role
   * was read at (access/role-memo.ts) and the billing status (frame-ops-service fromMemory).
   */
  guard?: Guard;
  set: FrameChange;
  /** In id order, the last the newest; each of this frame. */
  events: [NewFrameEvent, ...NewFrameEvent[]];
  /** Its target is this frame. */
  audit?: ReturnType<typeof auditRow>;
}

export interface Guard {
  userId: string;
  userVersion: number;
  projectVersion: number;
  billing: 'active' | 'past_due';
}

/** The frame's columns a stop or a start may change, returned as written. */
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

/** The row as written; undefined when it was not (moved since, or gone). */
export type Written = Pick<Selectable<DB['frames']>, (typeof CHANGED)[number]> & {
  /** The row's new version (frames-dal frameOf). */
  row_version: string;
  /** As the write saw them: the answer shows the agent as it is, not as remembered. */
  agent_last_seen_at: Date | null;
  agent_edge_http_port: number | null;
  agent_edge_https_port: number | null;
};

type Value = string | number | boolean | null;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A write's row of arguments: each column's name, type and value. */
const ROW: ReadonlyArray<readonly [string, string, (w: OperationWrite) => Value]> = [
  ['id', 'text', (w) => w.frameId],
  ['since', 'text', (w) => w.unchangedSince ?? null],
  ['user_id', 'text', (w) => w.guard?.userId ?? null],
  ['user_version', 'bigint', (w) => w.guard?.userVersion ?? null],
  ['project_version', 'bigint', (w) => w.guard?.projectVersion ?? null],
  ['billing', 'text', (w) => w.guard?.billing ?? null],
  ['desired_state', 'text', (w) => w.set.desired_state],
  ['updated_at', 'timestamptz', (w) => iso(w.set.updated_at)],
  ['clears_backoff', 'boolean', (w) => w.set.clears_backoff],
  ['last_status', 'text', (w) => w.set.last_status],
  ['last_status_reason', 'text', (w) => w.set.last_status_reason],
  ['generation', 'int', (w) => w.set.generation],
  ['version', 'int', (w) => w.set.version],
  // The frame's newest event is the last of ours (migrations/0016).
  ['last_event_id', 'text', (w) => w.events[w.events.length - 1]?.id ?? null],
];

/**
 * The statement of `n` writes of distinct frames, compiled once (db/compiled.ts): a row of
 * arguments per frame, then each written frame's events and audit record (JSON, matched to it
 * by frame). A write whose condition fails writes nothing, events included. Each frame is
 * locked as its row of `w` comes, in the order given. The rows are a VALUES list, not arrays
 * unnested: PostgreSQL then knows their number when it plans the prepared statement once,
 * and keeps that plan instead of planning each execution again (an unnested array of unknown
 * length is taken for 100 rows, which made every generic plan look dearer than a fresh one).
 */
const statement = (n: number) =>
  compiledOnce((_q, ...args: Value[]) => {
    const rows = Array.from(
      { length: n },
      (_, r) =>
        sql`(${sql.join(ROW.map(([, type], c) => sql`${args[r * ROW.length + c]}::${sql.raw(type)}`))})`,
    );
    const events = args[n * ROW.length];
    const audits = args[n * ROW.length + 1];
    return sql<Written & { id: string }>`with w (${sql.join(ROW.map(([c]) => sql.ref(c)))})
      as (values ${sql.join(rows)}),
    f as (update frames set desired_state = w.desired_state,
      updated_at = coalesce(w.updated_at, frames.updated_at),
      crash_streak = case when w.clears_backoff then 0 else frames.crash_streak end,
      backoff_tripped_at = case when w.clears_backoff then null else frames.backoff_tripped_at end,
      last_status = w.last_status, last_status_reason = w.last_status_reason,
      generation = w.generation, version = w.version, last_event_id = w.last_event_id
    from w
    where frames.id = w.id and (w.since is null or frames.xmin::text = w.since)
      and (w.user_id is null or exists (select from projects p join users cu on cu.id = w.user_id
        where p.id = frames.project_id and cu.access_version = w.user_version
        and p.access_version = w.project_version and ${payerBillingSql('p')} = w.billing))
    returning frames.id, ${sql.join(CHANGED.map((c) => sql.ref(`frames.${c}`)))},
      frames.xmin::text as row_version,
      (select a.last_seen_at from agents a where a.id = frames.agent_id) as agent_last_seen_at,
      (select a.edge_http_port from agents a where a.id = frames.agent_id)
        as agent_edge_http_port,
      (select a.edge_https_port from agents a where a.id = frames.agent_id)
        as agent_edge_https_port),
    e as (insert into frame_events (${sql.join(EVENT_COLUMNS.map((c) => sql.ref(c)))})
      select ${sql.join(EVENT_COLUMNS.map((c) => sql.ref(`r.${c}`)))}
      from jsonb_populate_recordset(null::frame_events, ${events}::jsonb) r
      join f on f.id = r.frame_id),
    a as (insert into audit_events select r.*
      from jsonb_populate_recordset(null::audit_events, ${audits}::jsonb) r
      join f on f.id = r.target_id)
    select * from f`;
  });

const statements: Array<ReturnType<typeof statement>> = [];

/**
 * Every column of an event but xid, which comes from its default (the writing transaction's
 * id). A column a row does not name is NULL, not its default: a column added later with a
 * default must be set in the rows.
 */
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

const byFrame = (a: OperationWrite, b: OperationWrite) =>
  a.frameId < b.frameId ? -1 : a.frameId > b.frameId ? 1 : 0;

/**
 * The writes, of distinct frames, in one statement: each one's row as written, or undefined.
 * Frames are locked in id order, so two such statements never wait for each other.
 */
export async function writeOperations(q: Queryable, writes: OperationWrite[]) {
  const sorted = writes.toSorted(byFrame);
  const args = sorted.flatMap((w) => ROW.map(([, , value]) => value(w)));
  const events = sorted.flatMap((w) =>
    w.events.map((e) => ({
      ...e,
      detail: e.detail && JSON.parse(e.detail),
      project_id: w.projectId,
      space_id: w.spaceId,
    })),
  );
  const audits = sorted.flatMap((w) => (w.audit ? [w.audit] : []));
  const run = statements[writes.length] ?? statement(writes.length);
  statements[writes.length] = run;
  const rows = await run(q, ...args, JSON.stringify(events), JSON.stringify(audits));
  const byId = new Map(rows.map(({ id, ...row }) => [id, row as Written]));
  return writes.map((w) => byId.get(w.frameId));
}

/**
 * Writes outside a transaction, through the database's coalescer (db/coalesce.ts): at most
 * `inFlight` statements at once, the writes that came meanwhile together in the next.
 */
export const operationWriter = (db: Database, inFlight = 2) =>
  coalesced((writes: OperationWrite[]) => writeOperations(db, writes), {
    inFlight,
    max: 64,
    key: (w) => w.frameId,
  });
