// What an agent is told to run: every frame placed on it with its latest deployment, volumes and
// verified domains (desiredStateRows), or only what identifies that state (fingerprintRows).
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { payerBilling } from '../frames/frames-dal.ts';

// The hostnames routed to frame `f`: verified domains only (a pending claim proves nothing, see
// frames/domains-service.ts), in name order so that the fingerprint is stable.
const verifiedHostnames = sql<string[]>`coalesce((select array_agg(d.hostname order by d.hostname)
  from domains d where d.frame_id = f.id and d.verified_at is not null), '{}')`.as('domains');

const volumesOfFrame = sql<
  Array<{ id: string; name: string; mount_path: string; size_gb: number }>
>`coalesce((select json_agg(json_build_object(
  'id', v.id, 'name', v.name, 'mount_path', v.mount_path, 'size_gb', v.size_gb) order by v.id)
  from volumes v where v.frame_id = f.id), '[]')`.as('volumes');

/** The agent's frames in id order, each with its latest deployment, volumes and domains. */
export function desiredStateRows(q: Queryable, agentId: string) {
  return q
    .selectFrom('frames as f')
    .innerJoin('projects as p', 'p.id', 'f.project_id')
    .innerJoinLateral(
      (eb) =>
        eb
          .selectFrom('deployments as d')
          .select([
            'd.id',
            'd.git_repository',
            'd.git_repository_owner',
            'd.git_repository_branch',
            'd.commit_sha',
            'd.env_sealed',
            'd.status',
            'd.failure_reason',
          ])
          .whereRef('d.frame_id', '=', 'f.id')
          .orderBy('d.id', 'desc')
          .limit(1)
          .as('d'),
      (j) => j.onTrue(),
    )
    .select([
      'f.id',
      'f.generation',
      'f.desired_state',
      'f.replica_count',
      'f.port',
      'f.health_check_path',
      payerBilling.as('billing_status'),
      'd.id as deployment_id',
      'd.git_repository',
      'd.git_repository_owner',
      'd.git_repository_branch',
      'd.commit_sha',
      'd.env_sealed',
      'd.status',
      'd.failure_reason',
      volumesOfFrame,
      verifiedHostnames,
    ])
    .where('f.agent_id', '=', agentId)
    .orderBy('f.id')
    .execute();
}

/** What identifies the desired state, without reading it all: ids, generations, failed builds. */
export function fingerprintRows(q: Queryable, agentId: string) {
  return q
    .selectFrom('frames as f')
    .innerJoin('projects as p', 'p.id', 'f.project_id')
    .select([
      'f.id as frame_id',
      'f.generation',
      sql<string>`case when ${payerBilling} = 'past_due' then 'stopped' else f.desired_state end`.as(
        'desired_state',
      ),
      // From the summary on the row (migrations/0005): no join with deployments.
      sql<boolean>`coalesce(f.latest_deployment->>'status' = 'failed'
        and f.latest_deployment->>'failure_reason' = 'build_failed', false)`.as('build_failed'),
      verifiedHostnames,
    ])
    .where('f.agent_id', '=', agentId)
    .orderBy('f.id')
    .execute();
}
