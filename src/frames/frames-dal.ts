// The frames table: reads (the frame with every fact its status is derived from, in one query),
// locks, and writes. Services own the transactions these run in.
import { type Insertable, sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import { ACCESS_VERSIONS, projectRoleSql } from '../access/access-dal.ts';
import type { RoleSeen } from '../access/role-memo.ts';
import { compiledOnce } from '../db/compiled.ts';
import { wakeAfterCommit } from '../db/waker.ts';
import { hostnameLabel } from './frame-address.ts';

/**
 * The billing status of whoever pays for the project `projectRef` (a column reference): its
 * user owner, or the organization that owns it (CONTRACT 3a). The project row holds a copy,
 * kept by the database (migrations/0021).
 */
export function payerBillingSql(projectRef: string) {
  return sql.ref<'active' | 'past_due'>(`${projectRef}.payer_billing`);
}

/** Frames with their project and agent: the tables a frame's status reads. */
const framesJoined = (q: Queryable) =>
  q
    .selectFrom('frames as f')
    .innerJoin('projects as p', 'p.id', 'f.project_id')
    .leftJoin('agents as a', 'a.id', 'f.agent_id');

/**
 * The facts a frame's view reads outside its row: who pays, its agent's last call, and its
 * agent's edge (the frame's url).
 */
const outsideFacts = [
  payerBillingSql('p').as('billing_status'),
  'a.last_seen_at as agent_last_seen_at',
  'a.edge_http_port as agent_edge_http_port',
  'a.edge_https_port as agent_edge_https_port',
] as const;

/** Frames with every fact their status is derived from; replicas and the latest deployment are columns of the row (migrations/0005). */
export function framesWithFacts(q: Queryable) {
  return framesJoined(q).selectAll('f').select(outsideFacts);
}

export type FrameWithFacts = Awaited<
  ReturnType<ReturnType<typeof framesWithFacts>['execute']>
>[number];

export function frameInProject(
  q: Queryable,
  projectId: string,
  spaceId: string | undefined,
  frameId: string,
) {
  let query = framesWithFacts(q).where('f.id', '=', frameId).where('f.project_id', '=', projectId);
  if (spaceId) query = query.where('f.space_id', '=', spaceId);
  return query.executeTakeFirst();
}

/**
 * The frame of a project and space: its row's version, the facts outside its row, and the
 * caller's user row as `cu` (for ACCESS_VERSIONS). The version (xmin) moves with every change
 * to the row, and the row with every change to the frame, its replicas, its deployments and its
 * events (migrations/0005, 0006, 0016): by it a stop or a start knows that the frame did not
 * move (frame-ops-dal), and a read that the row it remembers is current (frame-rows.ts).
 */
const frameOf = (
  q: Queryable,
  projectId: string,
  spaceId: string,
  frameId: string,
  userId: string,
) =>
  framesJoined(q)
    .innerJoin('users as cu', (j) => j.on('cu.id', '=', userId))
    .where('f.id', '=', frameId)
    .where('f.project_id', '=', projectId)
    .where('f.space_id', '=', spaceId)
    .select([...outsideFacts, sql<string>`f.xmin::text`.as('row_version')]);

type Scope = [projectId: string, spaceId: string, frameId: string, userId: string];
const role = (userId: string) => [projectRoleSql('p', userId).as('role'), ...ACCESS_VERSIONS];

const rowWithRole = compiledOnce((q, ...s: Scope) =>
  frameOf(q, ...s)
    .selectAll('f')
    .select(role(s[3])),
);
const rowWithVersions = compiledOnce((q, ...s: Scope) =>
  frameOf(q, ...s)
    .selectAll('f')
    .select(ACCESS_VERSIONS),
);
const factsWithRole = compiledOnce((q, ...s: Scope) => frameOf(q, ...s).select(role(s[3])));
const factsWithVersions = compiledOnce((q, ...s: Scope) =>
  frameOf(q, ...s).select(ACCESS_VERSIONS),
);

export type FrameForCaller = Awaited<ReturnType<typeof rowWithRole>>[number] & RoleSeen;
export type FrameFactsForCaller = Awaited<ReturnType<typeof factsWithRole>>[number] & RoleSeen;

type Read = (q: Queryable, ...s: Scope) => Promise<unknown[]>;

/** One frame for a caller; with `remembered`, the role's versions instead of the role. */
const oneForCaller =
  <R>(withRole: Read, withVersions: Read) =>
  async (
    q: Queryable,
    ...[projectId, spaceId, frameId, userId, remembered]: [...Scope, boolean?]
  ) =>
    (await (remembered ? withVersions : withRole)(q, projectId, spaceId, frameId, userId))[0] as
      | R
      | undefined;

/**
 * The frame and the caller's role on its project, in one round trip (the read path); with
 * `remembered`, only the versions of the role (access-service withRole).
 */
export const frameForCaller = oneForCaller<FrameForCaller>(rowWithRole, rowWithVersions);

/** As frameForCaller, without the frame's row: its version and the facts outside it. */
export const frameFactsForCaller = oneForCaller<FrameFactsForCaller>(
  factsWithRole,
  factsWithVersions,
);

/** Locks the frame row for a change; the change and its event commit together. */
export function lockFrame(q: Queryable, frameId: string) {
  return q
    .selectFrom('frames')
    .selectAll()
    .where('id', '=', frameId)
    .forUpdate()
    .executeTakeFirst();
}

/** Locks the frame for an operation if it is in that project and space (see frame-ops-service). */
export function lockFrameIn(q: Queryable, projectId: string, spaceId: string, frameId: string) {
  return q
    .selectFrom('frames')
    .select('id')
    .where('id', '=', frameId)
    .where('project_id', '=', projectId)
    .where('space_id', '=', spaceId)
    .forUpdate()
    .executeTakeFirst();
}

/** The frames of a project (of one space when given), as a query for a keyset page. */
export function framesOfProject(q: Queryable, projectId: string, spaceId?: string) {
  let query = framesWithFacts(q).where('f.project_id', '=', projectId);
  if (spaceId) query = query.where('f.space_id', '=', spaceId);
  return query;
}

export function framesWithFactsByIds(q: Queryable, frameIds: string[]) {
  return framesWithFacts(q).where('f.id', 'in', frameIds).execute();
}

export function spaceInProject(q: Queryable, projectId: string, spaceId: string) {
  return q
    .selectFrom('spaces')
    .select('id')
    .where('id', '=', spaceId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
}

export function agentInProject(q: Queryable, projectId: string, agentId: string) {
  return q
    .selectFrom('agents')
    .select('id')
    .where('id', '=', agentId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
}

/** Tries at insertFrame: each a fresh id, so a label taken twice in a row is all but impossible. */
const LABEL_TRIES = 5;

/**
 * Inserts the frame under an id from `newFrameId` and the hostname label made of its name and
 * that id (frame-address.ts). The label is unique (migrations/0023), and two frames of the same
 * name part may draw the same 6 characters of their ids: then the insert is tried again under a
 * new id, never failed.
 */
export async function insertFrame(
  q: Queryable,
  newFrameId: () => string,
  frame: Omit<Insertable<DB['frames']>, 'id' | 'hostname_label'>,
) {
  for (let tries = 0; tries < LABEL_TRIES; tries++) {
    const id = newFrameId();
    const row = await q
      .insertInto('frames')
      .values({ ...frame, id, hostname_label: hostnameLabel(frame.name, id) })
      .onConflict((oc) => oc.column('hostname_label').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row) return row;
  }
  throw new Error(`no free hostname label for frame "${frame.name}" in ${LABEL_TRIES} tries`);
}

/** The settings a PATCH may change, stored under their column names. */
export interface FrameSettings {
  name?: string;
  git_repository?: string;
  git_repository_owner?: string;
  git_repository_branch?: string;
  port?: number;
  replica_count?: number;
  health_check_path?: string;
}
/** What a PATCH writes: the settings, whether a push deploys, previews (frame-settings.ts). */
type FrameColumns = FrameSettings & {
  push_deploys_paused_at?: Date | null;
  push_deploys_paused_by?: string | null;
  previews_enabled?: boolean;
  previews_ttl_days?: number;
  previews_env_sealed?: string | null;
  previews_env_keys?: string[];
};

/** Saves new settings (a new version); `newGeneration` when the agent must learn them. */
export function updateFrameSettings(
  q: Queryable,
  frameId: string,
  settings: FrameColumns,
  at: Date,
  newGeneration: boolean,
) {
  return q
    .updateTable('frames')
    .set({
      ...settings,
      version: sql`version + 1`,
      updated_at: at,
      ...(newGeneration ? { generation: sql`generation + 1` } : {}),
    })
    .where('id', '=', frameId)
    .execute();
}

/** A change the agent must run (volumes): a new generation and version. */
export function bumpGeneration(q: Queryable, frameId: string, at: Date) {
  return q
    .updateTable('frames')
    .set({ generation: sql`generation + 1`, version: sql`version + 1`, updated_at: at })
    .where('id', '=', frameId)
    .execute();
}

export function setLastStatus(
  q: Queryable,
  frameId: string,
  status: string,
  reason: string | null,
) {
  return q
    .updateTable('frames')
    .set({ last_status: status, last_status_reason: reason })
    .where('id', '=', frameId)
    .execute();
}

export function deleteFrame(q: Queryable, frameId: string) {
  return q.deleteFrom('frames').where('id', '=', frameId).execute();
}

/** Locks several frames in id order, as every writer does, so writers cannot deadlock. */
export function lockFrames(q: Queryable, frameIds: string[]) {
  return q
    .selectFrom('frames')
    .select(['id', 'project_id', 'agent_id'])
    .where('id', 'in', frameIds)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Wakes an agent's long-polling sync once the transaction commits (db/waker.ts). */
export function notifyAgent(q: Queryable, agentId: string) {
  return wakeAfterCommit(q, 'frameplane_agent', agentId);
}

/** Wakes the frame's event listeners on commit (a deleted frame ends its live streams). */
export function notifyFrameEvents(q: Queryable, frameId: string) {
  return wakeAfterCommit(q, 'frameplane_frame_events', frameId);
}
