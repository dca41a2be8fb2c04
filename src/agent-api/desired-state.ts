// What an agent is told: the whole desired state of its frames, with each frame's env decrypted
// (and cached), and the digest by which a sync knows the agent's copy is current.
import type { Queryable } from '../db/database.ts';
import { MEMOS_ON, type Memos } from '../memo.ts';
import type { Sealer } from '../secrets.ts';
import { frameHostname } from '../frames/frame-address.ts';
import { desiredStateRows, stateDigestOf, touchAndDigest } from './desired-state-dal.ts';
import type { EdgeReport } from './sync-dal.ts';

/**
 * What a decrypted env holds in memory, over-estimated: two bytes per character (V8 keeps a
 * string with any non-Latin-1 character in UTF-16) and 64 bytes per property and per object.
 */
export function envMemoryBytes(env: Record<string, string>): number {
  let n = 64;
  for (const [k, v] of Object.entries(env)) n += 64 + 2 * (k.length + v.length);
  return n;
}

export function createDesiredState({
  db,
  sealer,
  envCacheMaxBytes,
  appsDomain,
  memos = MEMOS_ON,
}: {
  db: Queryable;
  sealer: Sealer;
  envCacheMaxBytes: number;
  /** The domain of frames' hostnames (APPS_DOMAIN). */
  appsDomain: string;
  memos?: Memos;
}) {
  // A deployment's env never changes: decrypt it once, not on every sync of every frame. Keyed
  // by frame, since a sync reads only a frame's latest deployment: a new one replaces the old
  // entry rather than sitting beside it. Bounded by bytes, as one env may weigh ENV_MAX_BYTES;
  // an env larger than the whole cache is decrypted on each sync and never kept.
  const envCache = memos.lru<{ deploymentId: string; env: Record<string, string> }>('agent-env', {
    maxSize: envCacheMaxBytes,
    sizeCalculation: (entry) => envMemoryBytes(entry.env),
  });
  const envOf = (frameId: string, deploymentId: string, sealed: string) => {
    const cached = envCache.get(frameId);
    if (cached?.deploymentId === deploymentId) return cached.env;
    const env = JSON.parse(sealer.open(sealed)) as Record<string, string>;
    envCache.set(frameId, { deploymentId, env });
    return env;
  };

  return {
    /** The agent's desired state and its digest (the `state` an agent sends back as known). */
    async desiredState(agentId: string) {
      const rows = await desiredStateRows(db, agentId, appsDomain);
      const state = rows[0]?.state ?? (await stateDigestOf(db, agentId, appsDomain));
      const frames = rows.map((r) => ({
        frame_id: r.id,
        project_id: r.project_id,
        generation: r.generation,
        // Billing suspension scales to zero without touching the frame's own desired state;
        // `suspended` lets the edge tell why the frame does not answer.
        desired_state: r.billing_status === 'past_due' ? ('stopped' as const) : r.desired_state,
        suspended: r.billing_status === 'past_due',
        hostname: frameHostname(r.hostname_label, appsDomain),
        replica_count: r.replica_count,
        port: r.port,
        health_check_path: r.health_check_path,
        // The latest deployment did not build: the agent must not build it again (a new
        // deployment will come).
        build_failed: r.status === 'failed' && r.failure_reason === 'build_failed',
        git_repository_owner: r.git_repository_owner,
        git_repository: r.git_repository,
        git_repository_branch: r.git_repository_branch,
        deployment_id: r.deployment_id,
        commit_sha: r.commit_sha,
        release_of: r.release_of,
        env: envOf(r.id, r.deployment_id, r.env_sealed),
        volumes: r.volumes,
        domains: r.domains,
        certificates: r.certificates,
      }));
      return { frames, state };
    },

    digest: (agentId: string) => stateDigestOf(db, agentId, appsDomain),
    touchAndDigest: (agentId: string, now: Date, edge?: EdgeReport) =>
      touchAndDigest(db, agentId, now, appsDomain, edge),

    /** What the env cache holds (for tests and the growth measurement). */
    envCacheStats: () => ({
      entries: envCache.size,
      bytes: envCache.calculatedSize,
      maxBytes: envCacheMaxBytes,
    }),
  };
}
