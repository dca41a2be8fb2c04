// Frame reads: the frame with every fact its status is derived from, in one query.
import type { Queryable } from '../db/database.ts';
import { ACCESS_VERSIONS, projectRoleSql } from '../access/access-dal.ts';
import type { RoleSeen } from '../access/role-memo.ts';
import { compiledOnce } from '../db/compiled.ts';

/** Frames with every fact their status is derived from; replicas and the latest deployment are columns of the row (migrations/0005). */
export function framesWithFacts(q: Queryable) {
  return q
    .selectFrom('frames as f')
    .innerJoin('projects as p', 'p.id', 'f.project_id')
    .innerJoin('users as o', 'o.id', 'p.owner_id')
    .leftJoin('agents as a', 'a.id', 'f.agent_id')
    .selectAll('f')
    .select(['o.billing_status', 'a.last_seen_at as agent_last_seen_at']);
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

/** The frame of a project and space, with the caller's user row as `cu` (for ACCESS_VERSIONS). */
const frameOf = (
  q: Queryable,
  projectId: string,
  spaceId: string,
  frameId: string,
  userId: string,
) =>
  framesWithFacts(q)
    .innerJoin('users as cu', (j) => j.on('cu.id', '=', userId))
    .where('f.id', '=', frameId)
    .where('f.project_id', '=', projectId)
    .where('f.space_id', '=', spaceId);

const frameWithRole = compiledOnce(
  (q, projectId: string, spaceId: string, frameId: string, userId: string) =>
    frameOf(q, projectId, spaceId, frameId, userId).select([
      projectRoleSql('p', userId).as('role'),
      ...ACCESS_VERSIONS,
    ]),
);
const frameWithVersions = compiledOnce(
  (q, projectId: string, spaceId: string, frameId: string, userId: string) =>
    frameOf(q, projectId, spaceId, frameId, userId).select(ACCESS_VERSIONS),
);

/**
 * The frame and the caller's role on its project, in one round trip (the read path); with
 * `remembered`, only the versions of the role (access-service withRole).
 */
export async function frameForCaller(
  q: Queryable,
  projectId: string,
  spaceId: string,
  frameId: string,
  userId: string,
  remembered?: boolean,
) {
  const rows = await (remembered ? frameWithVersions : frameWithRole)(
    q,
    projectId,
    spaceId,
    frameId,
    userId,
  );
  return rows[0] as (Awaited<ReturnType<typeof frameWithRole>>[number] & RoleSeen) | undefined;
}

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
