// A deployment freezes what a frame runs (git settings, env, commit) and bumps its generation,
// so the agent rolls it out; events of older generations stop counting. Starting one clears a
// back-off trip and runs the frame (unless it was stopped by hand and this is a push).
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import type { Sealer } from '../secrets.ts';
import { newId } from '../ids.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import type { DeploymentFailure } from '../db/schema.ts';

export type Trigger = 'create' | 'manual' | 'push' | 'reroll';

interface LockedFrame {
  id: string;
  generation: number;
  desired_state: 'running' | 'stopped';
  backoff_tripped_at: Date | null;
}

/** The frame's env vars as one sealed JSON object, and its keyed digest. */
export async function envSnapshot(q: Queryable, sealer: Sealer, frameId: string) {
  const rows = await q
    .selectFrom('frame_env')
    .select(['key', 'value_sealed'])
    .where('frame_id', '=', frameId)
    .orderBy('key')
    .execute();
  const env = Object.fromEntries(rows.map((r) => [r.key, sealer.open(r.value_sealed)]));
  const json = JSON.stringify(env);
  return { env, sealed: sealer.seal(json), digest: sealer.digest(json) };
}

export async function startDeployment(
  q: Queryable,
  sealer: Sealer,
  frame: LockedFrame,
  o: {
    trigger: Trigger;
    at: Date;
    actorId: string | null;
    commitSha?: string | null;
    /** Deployments to keep (DEPLOYMENT_HISTORY); older ones are pruned in this transaction. */
    keep: number;
  },
) {
  await q
    .updateTable('deployments')
    .set({ status: 'superseded', finished_at: o.at })
    .where('frame_id', '=', frame.id)
    .where('status', '=', 'in_progress')
    .execute();
  const generation = o.trigger === 'create' ? frame.generation : frame.generation + 1;
  const f = await q
    .selectFrom('frames')
    .select(['git_repository', 'git_repository_owner', 'git_repository_branch'])
    .where('id', '=', frame.id)
    .executeTakeFirstOrThrow();
  const env = await envSnapshot(q, sealer, frame.id);
  const deployment = await q
    .insertInto('deployments')
    .values({
      id: newId('deployment', o.at),
      frame_id: frame.id,
      trigger: o.trigger,
      status: 'in_progress',
      generation,
      ...f,
      commit_sha: o.commitSha ?? null,
      env_sealed: env.sealed,
      env_digest: env.digest,
      created_by: o.actorId,
      created_at: o.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  // A push does not start a frame someone stopped on purpose; it does restart one the
  // back-off stopped. A manual deploy, a re-roll and a creation run the frame.
  const run =
    o.trigger !== 'push' || frame.desired_state === 'running' || frame.backoff_tripped_at !== null;
  await q
    .updateTable('frames')
    .set({
      generation,
      crash_streak: 0,
      backoff_tripped_at: null,
      updated_at: o.at,
      ...(run ? { desired_state: 'running' as const } : {}),
      version: sql`version + 1`,
    })
    .where('id', '=', frame.id)
    .execute();
  await pruneDeployments(q, frame.id, o.keep);
  return deployment;
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

/** Ends the deployment in progress as failed, with why; a no-op when it is not in progress. */
export async function failDeployment(
  q: Queryable,
  deploymentId: string,
  at: Date,
  reason: DeploymentFailure,
  message?: string | null,
) {
  const r = await q
    .updateTable('deployments')
    .set({
      status: 'failed',
      finished_at: at,
      failure_reason: reason,
      failure_message: message ? message.slice(0, 2000) : null,
    })
    .where('id', '=', deploymentId)
    .where('status', '=', 'in_progress')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export const presentDeployment = (d: {
  id: string;
  frame_id: string;
  trigger: Trigger;
  status: 'in_progress' | 'succeeded' | 'failed' | 'superseded' | 'canceled';
  git_repository: string;
  git_repository_owner: string;
  git_repository_branch: string;
  commit_sha: string | null;
  failure_reason: DeploymentFailure | null;
  failure_message: string | null;
  created_by: string | null;
  created_at: Date;
  finished_at: Date | null;
}) => ({
  id: d.id,
  frame_id: d.frame_id,
  trigger: d.trigger,
  status: d.status,
  git_repository: d.git_repository,
  git_repository_owner: d.git_repository_owner,
  git_repository_branch: d.git_repository_branch,
  commit_sha: d.commit_sha,
  failure_reason: d.failure_reason,
  failure_message: d.failure_message,
  created_by: d.created_by,
  created_at: iso(d.created_at),
  finished_at: isoOrNull(d.finished_at),
});

/**
 * The rollout in progress succeeds once replica_count replicas of its generation are healthy and
 * run it: during a rollout the old release's replicas are reported under the new generation with
 * their own deployment id, and must not complete it (a replica without one is taken as current).
 */
export async function completeIfHealthy(q: Queryable, frameId: string, at: Date) {
  const d = await q
    .selectFrom('deployments')
    .select(['id', 'status', 'generation'])
    .where('frame_id', '=', frameId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (d?.status !== 'in_progress') return;
  const { replica_count } = await q
    .selectFrom('frames')
    .select('replica_count')
    .where('id', '=', frameId)
    .executeTakeFirstOrThrow();
  const healthy = await q
    .selectFrom('frame_replicas')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('frame_id', '=', frameId)
    .where('state', '=', 'healthy')
    .where('generation', '>=', d.generation)
    .where('replica', '<', replica_count)
    .where((eb) => eb.or([eb('deployment_id', 'is', null), eb('deployment_id', '=', d.id)]))
    .executeTakeFirstOrThrow();
  if (Number(healthy.n) >= replica_count) {
    await q
      .updateTable('deployments')
      .set({ status: 'succeeded', finished_at: at })
      .where('id', '=', d.id)
      .execute();
  }
}
