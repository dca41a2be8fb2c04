// Frame reads: the frame with every fact its status is derived from, in one query.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { projectRoleSql } from '../access/access-dal.ts';
import { compiledOnce } from '../db/compiled.ts';

export interface ReplicaRow { replica: number; generation: number; state: string; pull_failed: boolean; since: string }
export interface DeploymentSnapshot {
  id: string; status: string; generation: number; trigger: string; git_repository: string; git_repository_owner: string;
  git_repository_branch: string; env_digest: string; commit_sha: string | null; created_at: string;
}

export function framesWithFacts(q: Queryable) {
  return q.selectFrom('frames as f')
    .innerJoin('projects as p', 'p.id', 'f.project_id')
    .innerJoin('users as o', 'o.id', 'p.owner_id')
    .leftJoin('agents as a', 'a.id', 'f.agent_id')
    .selectAll('f')
    .select([
      'o.billing_status',
      'a.last_seen_at as agent_last_seen_at',
      sql<ReplicaRow[]>`coalesce((select json_agg(json_build_object('replica', r.replica, 'generation', r.generation,
        'state', r.state, 'pull_failed', r.pull_failed, 'since', r.since) order by r.replica)
        from frame_replicas r where r.frame_id = f.id), '[]')`.as('replicas'),
      sql<DeploymentSnapshot | null>`(select row_to_json(d) from (select id, status, generation, trigger, git_repository,
        git_repository_owner, git_repository_branch, env_digest, commit_sha, created_at from deployments
        where frame_id = f.id order by id desc limit 1) d)`.as('deployment'),
    ]);
}

export type FrameWithFacts = Awaited<ReturnType<ReturnType<typeof framesWithFacts>['execute']>>[number];

export function frameInProject(q: Queryable, projectId: string, spaceId: string | undefined, frameId: string) {
  let query = framesWithFacts(q).where('f.id', '=', frameId).where('f.project_id', '=', projectId);
  if (spaceId) query = query.where('f.space_id', '=', spaceId);
  return query.executeTakeFirst();
}

const frameWithRole = compiledOnce((q, projectId: string, spaceId: string, frameId: string, userId: string) =>
  framesWithFacts(q).select(projectRoleSql('p', userId).as('caller_role'))
    .where('f.id', '=', frameId).where('f.project_id', '=', projectId).where('f.space_id', '=', spaceId));

/** The frame and the caller's role on its project, in one round trip (the read path). */
export async function frameForCaller(q: Queryable, projectId: string, spaceId: string, frameId: string, userId: string) {
  return (await frameWithRole(q, projectId, spaceId, frameId, userId))[0];
}

/** Locks the frame row for a change; the change and its event commit together. */
export function lockFrame(q: Queryable, frameId: string) {
  return q.selectFrom('frames').selectAll().where('id', '=', frameId).forUpdate().executeTakeFirst();
}

/** Locks the frame for an operation if it is in that project and space (see frame-ops-service). */
export function lockFrameIn(q: Queryable, projectId: string, spaceId: string, frameId: string) {
  return q.selectFrom('frames').select('id')
    .where('id', '=', frameId).where('project_id', '=', projectId).where('space_id', '=', spaceId)
    .forUpdate().executeTakeFirst();
}
