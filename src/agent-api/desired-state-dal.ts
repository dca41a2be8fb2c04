// What an agent is told to run: every frame placed on it with its latest deployment, volumes and
// verified domains (desiredStateRows), or only the digest that identifies that state (stateDigestOf).
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';
import { payerBillingSql } from '../frames/frames-dal.ts';
import { type EdgeReport, edgeColumns } from './sync-dal.ts';

// The hostnames routed to frame `f`: verified domains only (a pending claim proves nothing, see
// domains/domains-service.ts), in name order so that the fingerprint is stable.
const hostnamesOf = sql<string[]>`coalesce((select array_agg(d.hostname order by d.hostname)
  from domains d where d.frame_id = f.id and d.verified_at is not null), '{}')`;
const verifiedHostnames = hostnamesOf.as('domains');

// The certificates issued for the hosts of frame `f` (certificates/), by name: the agent
// fetches the ones whose fingerprint it does not hold.
const certificatesOfFrame = (appsDomain: string) =>
  sql<Array<{ hostname: string; fingerprint: string }>>`coalesce((select json_agg(json_build_object(
  'hostname', c.hostname, 'fingerprint', c.fingerprint) order by c.hostname)
  from edge_certificates c where c.fingerprint is not null
  and (c.hostname = f.hostname_label || '.' || ${appsDomain}::text or c.hostname in
    (select d.hostname from domains d where d.frame_id = f.id and d.verified_at is not null))),
  '[]')`.as('certificates');

const volumesOfFrame = sql<
  Array<{ id: string; name: string; mount_path: string; size_gb: number }>
>`coalesce((select json_agg(json_build_object(
  'id', v.id, 'name', v.name, 'mount_path', v.mount_path, 'size_gb', v.size_gb) order by v.id)
  from volumes v where v.frame_id = f.id), '[]')`.as('volumes');

/**
 * The agent's frames in id order, each with its latest deployment, volumes and domains; `state`
 * is the digest of what they tell under `appsDomain`.
 */
export function desiredStateRows(q: Queryable, agentId: string, appsDomain: string) {
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
            'd.release_of',
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
      'f.project_id',
      'f.generation',
      'f.desired_state',
      'f.replica_count',
      'f.port',
      'f.health_check_path',
      'f.hostname_label',
      payerBillingSql('p').as('billing_status'),
      'd.id as deployment_id',
      'd.git_repository',
      'd.git_repository_owner',
      'd.git_repository_branch',
      'd.commit_sha',
      'd.release_of',
      'd.env_sealed',
      'd.status',
      'd.failure_reason',
      volumesOfFrame,
      verifiedHostnames,
      certificatesOfFrame(appsDomain),
      // Computed once, in the same snapshot as the rows: it describes exactly this answer.
      stateDigest(agentId, appsDomain).as('state'),
    ])
    .where('f.agent_id', '=', agentId)
    .orderBy('f.id')
    .execute();
}

/**
 * The digest of the agent's desired state: what an agent holds is current while its digest is.
 * Everything the agent is told moves the generation or comes with a new deployment (which
 * does), billing suspension and restoration included (admin/billing-service: so `suspended`
 * moves it), except its own stop or start, a failed build and the verified domains, which are
 * routing: those are in the digest themselves. A frame's hostname is its id's for good
 * (migrations/0023) but for APPS_DOMAIN, which is in the digest: an instance restarted under
 * another domain tells its agents at once. Read from the frame rows and the verified domains,
 * in two scans rather than a subquery per frame (and the fingerprints of their certificates, in a
 * third, which finds nothing at once when the service has no ACME): an idle agent's sync is little more than
 * this. An md5: a change detector, not a secret.
 */
const stateDigest = (agentId: string, appsDomain: string) => sql<string>`(select md5(
    coalesce(string_agg(f.id || ':' || f.generation || ':' || f.desired_state ||
      case when f.latest_deployment->>'status' = 'failed'
        and f.latest_deployment->>'failure_reason' = 'build_failed' then ':build_failed' else ''
      end, ',' order by f.id), '') || ';' ||
    coalesce((select string_agg(d.frame_id || '=' || d.hostname, ',' order by d.frame_id, d.hostname)
      from domains d join frames df on df.id = d.frame_id
      where df.agent_id = ${agentId} and d.verified_at is not null), '') || ';' ||
    ${appsDomain}::text || ';' ||
    coalesce((select string_agg(c.fingerprint, ',' order by c.hostname)
      from edge_certificates c where c.fingerprint is not null and c.hostname in (
        select af.hostname_label || '.' || ${appsDomain}::text from frames af
          where af.agent_id = ${agentId}
        union all
        select d.hostname from domains d join frames df on df.id = d.frame_id
          where df.agent_id = ${agentId} and d.verified_at is not null)), ''))
  from frames f where f.agent_id = ${agentId})`;

/** The digest of the agent's desired state, without reading that state. */
export async function stateDigestOf(q: Queryable, agentId: string, appsDomain: string) {
  const digest = stateDigest(agentId, appsDomain);
  const { rows } = await sql<{ state: string }>`select ${digest} as state`.execute(q);
  return rows[0]?.state ?? '';
}

/** The agent's heartbeat (and its edge, if it said) and the digest of its desired state. */
export async function touchAndDigest(
  q: Queryable,
  agentId: string,
  now: Date,
  appsDomain: string,
  edge?: EdgeReport,
) {
  const touch = q
    .updateTable('agents')
    .set({ last_seen_at: now, ...edgeColumns(edge) })
    .where('id', '=', agentId);
  const { rows } = await sql<{ state: string }>`with touched as (${touch})
    select ${stateDigest(agentId, appsDomain)} as state`.execute(q);
  return rows[0]?.state ?? '';
}
