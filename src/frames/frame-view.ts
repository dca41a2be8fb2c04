// How a frame reads: its record (CONTRACT 5), its addresses (5b), plus what makes it
// self-explaining (the back-off breaker, agent staleness, settings not yet deployed).
import { iso, isoOrNull } from '../http/schemas.ts';
import { CLEARS_ON, CRASH_THRESHOLD } from './backoff.ts';
import { frameHostname, frameUrl } from './frame-address.ts';
import { frameStatus, type FrameFacts, type ReplicaState } from './frame-status.ts';
import type { FrameWithFacts } from './frames-dal.ts';

/** Replicas that count for the current deployment: reports older than it are history. */
export function currentReplicas(f: FrameWithFacts) {
  const from = f.latest_deployment?.generation ?? 0;
  return f.replicas.filter((r) => r.generation >= from);
}

export function factsOf(f: FrameWithFacts): FrameFacts {
  const current = currentReplicas(f);
  const byIndex = Array.from({ length: f.replica_count }, (_, i) => {
    const r = current.find((x) => x.replica === i);
    // Stopped under an earlier generation (a scale-down, a stop) is not what the agent does
    // now: after a scale-up or a start, the replica has not reported yet.
    if (!r || (r.state === 'stopped' && r.generation < f.generation)) return undefined;
    return { state: r.state as ReplicaState, reason: r.reason };
  });
  // A replica still running beyond replica_count keeps a stopping frame "stopping".
  for (const r of current)
    if (r.replica >= f.replica_count)
      byIndex.push({ state: r.state as ReplicaState, reason: r.reason });
  const d = f.latest_deployment;
  return {
    billingPastDue: f.billing_status === 'past_due',
    desiredState: f.desired_state,
    backoffTripped: f.backoff_tripped_at !== null,
    deployInProgress:
      f.desired_state === 'running' && f.latest_deployment?.status === 'in_progress',
    replicaCount: f.replica_count,
    replicas: byIndex,
    buildFailed: d?.status === 'failed' && d.failure_reason === 'build_failed',
  };
}

export function pendingChanges(f: FrameWithFacts): string[] {
  const d = f.latest_deployment;
  if (!d) return [];
  const out: string[] = [];
  if (d.git_repository !== f.git_repository) out.push('git_repository_name');
  if (d.git_repository_owner !== f.git_repository_owner) out.push('git_repository_owner');
  if (d.git_repository_branch !== f.git_repository_branch) out.push('git_repository_branch');
  if (d.env_digest !== f.env_digest) out.push('env');
  return out;
}

/** What a preview frame previews, and until when; null for any other frame. */
function previewOf(f: FrameWithFacts) {
  if (!f.preview_of || !f.preview_pushed_at || !f.preview_expires_at) return null;
  return {
    of: f.preview_of,
    branch: f.preview_branch ?? '',
    pull_request: f.preview_pull_request,
    pushed_at: iso(f.preview_pushed_at),
    expires_at: iso(f.preview_expires_at),
  };
}

function latestDeployment(f: FrameWithFacts) {
  const d = f.latest_deployment;
  if (!d) return null;
  return {
    id: d.id,
    status: d.status,
    trigger: d.trigger,
    commit_sha: d.commit_sha,
    failure_reason: d.failure_reason,
    failure_message: d.failure_message,
    created_at: iso(d.created_at),
  };
}

/** An agent is online while its last call is at most `afterSeconds` old. */
export const agentOnline = (lastSeen: Date | null, now: Date, afterSeconds: number) =>
  !!lastSeen && now.getTime() - new Date(lastSeen).getTime() <= afterSeconds * 1000;

export const etagOf = (f: { id: string; version: number }) => `"${f.id}.v${f.version}"`;

/** What a frame's view takes from the service's settings. */
export interface ViewSettings {
  offlineAfterSeconds: number;
  appsDomain: string;
  /** The service has an ACME server: an edge that serves HTTPS has certificates to serve. */
  tls: boolean;
}

export function presentFrame(f: FrameWithFacts, now: Date, settings: ViewSettings) {
  const { status, reason } = frameStatus(factsOf(f));
  const pulling = currentReplicas(f)
    .filter((r) => r.state === 'pulling')
    .map((r) => r.since)
    .sort();
  const lastSeen = f.agent_last_seen_at;
  const hostname = frameHostname(f.hostname_label, settings.appsDomain);
  const edge = {
    http: f.agent_edge_http_port,
    https: settings.tls ? f.agent_edge_https_port : null,
  };
  return {
    id: f.id,
    project_id: f.project_id,
    space_id: f.space_id,
    name: f.name,
    hostname,
    url: frameUrl(hostname, edge),
    owner_id: f.owner_id,
    git_repository: f.git_repository,
    git_repository_name: f.git_repository,
    git_repository_owner: f.git_repository_owner,
    git_repository_branch: f.git_repository_branch,
    port: f.port,
    health_check_path: f.health_check_path,
    replica_count: f.replica_count,
    status,
    status_reason: reason,
    desired_state: f.desired_state,
    // An agent frame always has its agent (CHECK in migrations/0002); the test narrows the type.
    runtime:
      f.runtime_kind === 'agent' && f.agent_id !== null
        ? { kind: 'agent' as const, agent_id: f.agent_id }
        : { kind: 'cloud' as const },
    agent_id: f.agent_id,
    agent_online: agentOnline(lastSeen, now, settings.offlineAfterSeconds),
    agent_last_seen_at: isoOrNull(lastSeen),
    backoff: {
      crash_streak: f.crash_streak,
      threshold: CRASH_THRESHOLD,
      pulling_since: pulling[0] ? iso(pulling[0]) : null,
      tripped_at: isoOrNull(f.backoff_tripped_at),
      clears_on: [...CLEARS_ON],
    },
    replicas: f.replicas.map((r) => ({
      replica: r.replica,
      state: r.state,
      generation: r.generation,
      since: iso(r.since),
    })),
    latest_deployment: latestDeployment(f),
    serving: f.serving_deployment
      ? { deployment_id: f.serving_deployment.id, commit_sha: f.serving_deployment.commit_sha }
      : null,
    pending_changes: pendingChanges(f),
    push_deploys: {
      enabled: f.push_deploys_paused_at === null,
      paused_at: isoOrNull(f.push_deploys_paused_at),
      paused_by: f.push_deploys_paused_by,
    },
    previews: {
      enabled: f.previews_enabled,
      ttl_days: f.previews_ttl_days,
      env_keys: f.previews_env_keys,
    },
    preview: previewOf(f),
    generation: f.generation,
    version: f.version,
    created_at: iso(f.created_at),
    updated_at: iso(f.updated_at),
  };
}

export type FrameView = ReturnType<typeof presentFrame>;
