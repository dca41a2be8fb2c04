// Previews' rows: the parents a delivery concerns, a parent's preview of a branch, and those
// whose time is up. Services own the transactions these run in.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { payerBillingSql } from '../frames/frames-dal.ts';

interface Repo {
  owner: string;
  repo: string;
}

/** The projects' frames that make previews of `repo` (names compared ignoring case). */
export function previewParents(
  q: Queryable,
  projectIds: string[],
  r: Repo,
  o: { branch?: string; notBranch: string },
) {
  let query = q
    .selectFrom('frames')
    .select('id')
    .where('project_id', 'in', projectIds)
    .where('previews_enabled', '=', true)
    .where(sql`lower(git_repository_owner)`, '=', r.owner.toLowerCase())
    .where(sql`lower(git_repository)`, '=', r.repo.toLowerCase())
    .where('git_repository_branch', '<>', o.notBranch);
  if (o.branch) query = query.where('git_repository_branch', '=', o.branch);
  return query.orderBy('id').execute();
}

/** The previews of `branch` made of the projects' frames watching `repo`. */
export function previewsOfBranch(q: Queryable, projectIds: string[], r: Repo, branch: string) {
  return q
    .selectFrom('frames as c')
    .innerJoin('frames as p', 'p.id', 'c.preview_of')
    .select('c.id')
    .where('p.project_id', 'in', projectIds)
    .where(sql`lower(p.git_repository_owner)`, '=', r.owner.toLowerCase())
    .where(sql`lower(p.git_repository)`, '=', r.repo.toLowerCase())
    .where('c.preview_branch', '=', branch)
    .orderBy('c.id')
    .execute();
}

/** Locks a frame, with who pays for its project. */
export function lockFrameWithBilling(q: Queryable, frameId: string) {
  return q
    .selectFrom('frames as f')
    .innerJoin('projects as p', 'p.id', 'f.project_id')
    .selectAll('f')
    .select(payerBillingSql('p').as('billing_status'))
    .where('f.id', '=', frameId)
    .forUpdate('f')
    .executeTakeFirst();
}

/** The parent's preview of `branch`, locked. */
export function lockPreview(q: Queryable, parentId: string, branch: string) {
  return q
    .selectFrom('frames')
    .selectAll()
    .where('preview_of', '=', parentId)
    .where('preview_branch', '=', branch)
    .forUpdate()
    .executeTakeFirst();
}

/** The deployment a preview runs or is rolling out, to tell a repeated commit. */
export function latestOf(q: Queryable, frameId: string) {
  return q
    .selectFrom('deployments')
    .select(['commit_sha', 'status'])
    .where('frame_id', '=', frameId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export function pushedPreview(
  q: Queryable,
  frameId: string,
  o: { at: Date; expiresAt: Date; pullRequest?: number },
) {
  return q
    .updateTable('frames')
    .set({
      preview_pushed_at: o.at,
      preview_expires_at: o.expiresAt,
      ...(o.pullRequest !== undefined ? { preview_pull_request: o.pullRequest } : {}),
    })
    .where('id', '=', frameId)
    .execute();
}

/** Copies the parent's env to its new preview, sealed as it is (one SECRET_KEY seals both). */
export function copyEnv(q: Queryable, fromFrameId: string, toFrameId: string) {
  return sql`insert into frame_env (frame_id, key, value_sealed)
    select ${toFrameId}, key, value_sealed from frame_env where frame_id = ${fromFrameId}`.execute(
    q,
  );
}

/** Previews whose time is up at `now` (that one, locked, with `frameId`). */
export async function expiredPreviews(q: Queryable, now: Date, frameId?: string) {
  let query = q.selectFrom('frames').select('id').where('preview_expires_at', '<=', now);
  if (frameId) query = query.where('id', '=', frameId).forUpdate();
  const rows = await query.orderBy('id').execute();
  return rows.map((r) => r.id);
}

/** A parent's previews take its new time to live from their last push. */
export function reexpire(q: Queryable, parentId: string, ttlDays: number) {
  return sql`update frames set preview_expires_at = preview_pushed_at + ${ttlDays} * interval '1 day'
    where preview_of = ${parentId}`.execute(q);
}
