// A deployment freezes what a frame runs (git settings, env, commit) and bumps its generation,
// so the agent rolls it out; events of older generations stop counting. Starting one clears a
// back-off trip and runs the frame (unless it was stopped by hand and this is a push).
import type { Queryable } from '../db/database.ts';
import type { Sealer } from '../secrets.ts';
import { newId } from '../ids.ts';
import { iso, isoOrNull } from '../http/schemas.ts';
import type { DeploymentFailure, ReleaseSettings } from '../db/schema.ts';
import * as dal from './deployments-dal.ts';
import { envRows } from '../env/env-dal.ts';
import { notifyOfDeployment } from '../notifications/notify.ts';

export const TRIGGERS = [
  'create',
  'manual',
  'push',
  'reroll',
  'rollback',
  'restart',
  'config',
] as const;
export type Trigger = (typeof TRIGGERS)[number];

/** An earlier deployment whose build a new one runs, with the env it runs it with. */
export interface ReleaseOf {
  id: string;
  commit_sha: string;
  git_repository: string;
  git_repository_owner: string;
  git_repository_branch: string;
  /** The env to run: that release's (sealed as it was), or none to take the frame's now. */
  env?: { env_sealed: string; env_digest: string };
}

interface LockedFrame {
  id: string;
  generation: number;
  desired_state: 'running' | 'stopped';
  backoff_tripped_at: Date | null;
}

/** The frame's env vars as one sealed JSON object, and its keyed digest. */
export async function envSnapshot(q: Queryable, sealer: Sealer, frameId: string) {
  const rows = await envRows(q, frameId);
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
    /** Runs this earlier release's build (its commit, its git settings) instead of building. */
    release?: ReleaseOf;
  },
) {
  await dal.supersedeInProgress(q, frame.id, o.at);
  const generation = o.trigger === 'create' ? frame.generation : frame.generation + 1;
  const r = o.release;
  // Git settings are frozen into the release (a rollback's are the release's); the rest apply
  // live, and are recorded so that a release can say what it changed.
  const { port, replica_count, health_check_path, ...savedGit } = await dal.frameSettingsNow(
    q,
    frame.id,
  );
  const settings: ReleaseSettings = { port, replica_count, health_check_path };
  const git = r
    ? {
        git_repository: r.git_repository,
        git_repository_owner: r.git_repository_owner,
        git_repository_branch: r.git_repository_branch,
      }
    : savedGit;
  const env = r?.env
    ? { sealed: r.env.env_sealed, digest: r.env.env_digest }
    : await envSnapshot(q, sealer, frame.id);
  const deployment = await dal.insertDeployment(q, {
    id: newId('deployment', o.at),
    frame_id: frame.id,
    trigger: o.trigger,
    status: 'in_progress',
    generation,
    ...git,
    commit_sha: r ? r.commit_sha : (o.commitSha ?? null),
    release_of: r?.id ?? null,
    env_sealed: env.sealed,
    env_digest: env.digest,
    settings: JSON.stringify(settings),
    created_by: o.actorId,
    created_at: o.at,
  });
  // A push does not start a frame someone stopped on purpose; it does restart one the
  // back-off stopped. A manual deploy, a re-roll and a creation run the frame.
  const run =
    o.trigger !== 'push' || frame.desired_state === 'running' || frame.backoff_tripped_at !== null;
  await dal.applyDeployment(q, frame.id, { generation, at: o.at, run });
  await dal.pruneDeployments(q, frame.id, o.keep);
  await notifyOfDeployment(q, o.at, 'deploy.started', deployment);
  return deployment;
}

/**
 * Ends the deployment in progress as failed, with why; a no-op when it is not in progress.
 * True when it ended it.
 */
export async function failDeployment(
  q: Queryable,
  deploymentId: string,
  at: Date,
  reason: DeploymentFailure,
  message?: string | null,
) {
  const ended = await dal.markFailed(q, deploymentId, at, reason, message?.slice(0, 2000) ?? null);
  if (ended) await notifyOfDeployment(q, at, 'deploy.failed', ended);
  return ended !== undefined;
}

/** Ends whatever deployment of the frame is in progress as failed (a back-off trip). */
export async function failInProgress(
  q: Queryable,
  frameId: string,
  at: Date,
  reason: DeploymentFailure,
) {
  for (const d of await dal.markInProgressFailed(q, frameId, at, reason))
    await notifyOfDeployment(q, at, 'deploy.failed', d);
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
  release_of: string | null;
  image: string | null;
  settings: ReleaseSettings | null;
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
  release_of: d.release_of,
  image: d.image,
  settings: d.settings,
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
  const d = await dal.latestDeployment(q, frameId);
  if (d?.status !== 'in_progress') return;
  const replicaCount = await dal.replicaCountOf(q, frameId);
  if ((await dal.healthyReplicasOf(q, frameId, d, replicaCount)) >= replicaCount) {
    const done = await dal.markSucceeded(q, d.id, at);
    if (done) await notifyOfDeployment(q, at, 'deploy.succeeded', done);
  }
}
