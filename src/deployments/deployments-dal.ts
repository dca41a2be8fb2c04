// Deployments: what a frame runs, frozen per rollout (deployments.ts holds the rules).
import { type Insertable, sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { DB, DeploymentFailure } from '../db/schema.ts';

export function supersedeInProgress(q: Queryable, frameId: string, at: Date) {
  return q
    .updateTable('deployments')
    .set({ status: 'superseded', finished_at: at })
    .where('frame_id', '=', frameId)
    .where('status', '=', 'in_progress')
    .execute();
}

/** The settings a new deployment freezes (git) or records (the rest, applied live). */
export function frameSettingsNow(q: Queryable, frameId: string) {
  return q
    .selectFrom('frames')
    .select([
      'git_repository',
      'git_repository_owner',
      'git_repository_branch',
      'port',
      'replica_count',
      'health_check_path',
    ])
    .where('id', '=', frameId)
    .executeTakeFirstOrThrow();
}

export function insertDeployment(q: Queryable, deployment: Insertable<DB['deployments']>) {
  return q.insertInto('deployments').values(deployment).returningAll().executeTakeFirstOrThrow();
}

/** Points the frame at a new generation, clears its back-off, and runs it when `run`. */
export function applyDeployment(
  q: Queryable,
  frameId: string,
  o: { generation: number; at: Date; run: boolean },
) {
  return q
    .updateTable('frames')
    .set({
      generation: o.generation,
      crash_streak: 0,
      backoff_tripped_at: null,
      updated_at: o.at,
      ...(o.run ? { desired_state: 'running' as const } : {}),
      version: sql`version + 1`,
    })
    .where('id', '=', frameId)
    .execute();
}

/** Pauses the frame's push deploys; `by` is the rollback that did, null when done by hand. */
export function pausePushDeploys(q: Queryable, frameId: string, at: Date, by: string | null) {
  return q
    .updateTable('frames')
    .set({ push_deploys_paused_at: at, push_deploys_paused_by: by })
    .where('id', '=', frameId)
    .execute();
}

/**
 * Keeps the newest `keep` deployments of a frame, and older ones still in use: the one in
 * progress, the serving one, and any a replica reports running (a replica without a deployment
 * id runs the newest of its generation or before, as frame_serving_json reads it). Each holds a
 * sealed env snapshot, so history is what bounds a frame's stored env. Runs in the transaction
 * that adds a deployment, on the locked frame: no history ever exceeds the limit, and the list's
 * keyset cursors (id < cursor) stay valid; a pruned row simply no longer appears.
 */
export async function pruneDeployments(q: Queryable, frameId: string, keep: number) {
  await sql`
    with in_use as (
      select coalesce(r.deployment_id, (select o.id from deployments o where o.frame_id = ${frameId}
        and o.generation <= r.generation order by o.id desc limit 1)) as id
      from frame_replicas r where r.frame_id = ${frameId}
      union all select serving_deployment->>'id' from frames where id = ${frameId}
    ), kept as (
      select id from deployments where frame_id = ${frameId} order by id desc limit ${keep}
    )
    delete from deployments d where d.frame_id = ${frameId} and d.status <> 'in_progress'
      and d.id < (select min(id) from kept)
      and not exists (select 1 from in_use u where u.id = d.id)`.execute(q);
}

/** Ends the deployment as failed if it is still in progress: the row then, else undefined. */
export function markFailed(
  q: Queryable,
  deploymentId: string,
  at: Date,
  reason: DeploymentFailure,
  message: string | null,
) {
  return q
    .updateTable('deployments')
    .set({ status: 'failed', finished_at: at, failure_reason: reason, failure_message: message })
    .where('id', '=', deploymentId)
    .where('status', '=', 'in_progress')
    .returningAll()
    .executeTakeFirst();
}

/** Ends every deployment of the frame still in progress as failed; the rows ended. */
export function markInProgressFailed(
  q: Queryable,
  frameId: string,
  at: Date,
  reason: DeploymentFailure,
) {
  return q
    .updateTable('deployments')
    .set({ status: 'failed', finished_at: at, failure_reason: reason })
    .where('frame_id', '=', frameId)
    .where('status', '=', 'in_progress')
    .returningAll()
    .execute();
}

export function markSucceeded(q: Queryable, deploymentId: string, at: Date) {
  return q
    .updateTable('deployments')
    .set({ status: 'succeeded', finished_at: at })
    .where('id', '=', deploymentId)
    .returningAll()
    .executeTakeFirst();
}

export function latestDeployment(q: Queryable, frameId: string) {
  return q
    .selectFrom('deployments')
    .select(['id', 'status', 'generation'])
    .where('frame_id', '=', frameId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function replicaCountOf(q: Queryable, frameId: string) {
  const f = await q
    .selectFrom('frames')
    .select('replica_count')
    .where('id', '=', frameId)
    .executeTakeFirstOrThrow();
  return f.replica_count;
}

/**
 * Healthy replicas among the first `replicaCount` that run this deployment or a later
 * generation (a replica without a deployment id is taken as running the current one).
 */
export async function healthyReplicasOf(
  q: Queryable,
  frameId: string,
  d: { id: string; generation: number },
  replicaCount: number,
) {
  const healthy = await q
    .selectFrom('frame_replicas')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('frame_id', '=', frameId)
    .where('state', '=', 'healthy')
    .where('generation', '>=', d.generation)
    .where('replica', '<', replicaCount)
    .where((eb) => eb.or([eb('deployment_id', 'is', null), eb('deployment_id', '=', d.id)]))
    .executeTakeFirstOrThrow();
  return Number(healthy.n);
}

/** A page of a frame's deployments, newest first: those before `beforeId`, one more than asked. */
export function deploymentsPage(
  q: Queryable,
  frameId: string,
  limit: number,
  beforeId: string | undefined,
) {
  let query = q.selectFrom('deployments').selectAll().where('frame_id', '=', frameId);
  if (beforeId) query = query.where('id', '<', beforeId);
  return query
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

export function deploymentOf(q: Queryable, frameId: string, deploymentId: string) {
  return q
    .selectFrom('deployments')
    .selectAll()
    .where('frame_id', '=', frameId)
    .where('id', '=', deploymentId)
    .executeTakeFirst();
}

/** The newest release (a deployment that succeeded) before `beforeId`, if history holds one. */
export function releasesBefore(q: Queryable, frameId: string, beforeId: string) {
  return q
    .selectFrom('deployments')
    .selectAll()
    .where('frame_id', '=', frameId)
    .where('status', '=', 'succeeded')
    .where('id', '<', beforeId)
    .orderBy('id', 'desc')
    .limit(1)
    .execute();
}
