// Which earlier build a new deployment runs (issue 36): a restart runs the serving release
// again, a rollback an earlier one, neither builds. A release is a deployment that served
// (succeeded) with a known commit; its build is the one of the deployment that built it
// (`release_of` of a rollback or restart, else its own id). The agents keep the builds of a
// frame's last RELEASES_KEPT releases (and the serving one); an older one answers 409, saying
// how to build its commit again.
import type { Queryable } from '../db/database.ts';
import type { Actor } from '../actor.ts';
import type { Sealer } from '../secrets.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { AppError, conflict, notFound } from '../errors.ts';
import { presentDeployment, type ReleaseOf, startDeployment } from './deployments.ts';
import { pausePushDeploys } from './deployments-dal.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';

/** With the env the release ran (`release`), or the frame's env as it is now (`current`). */
export type RollbackConfig = 'release' | 'current';

interface ReleaseRow {
  id: string;
  status: string;
  commit_sha: string | null;
  release_of: string | null;
  git_repository: string;
  git_repository_owner: string;
  git_repository_branch: string;
  env_sealed: string;
  env_digest: string;
}

const COLUMNS = [
  'd.id',
  'd.status',
  'd.commit_sha',
  'd.release_of',
  'd.git_repository',
  'd.git_repository_owner',
  'd.git_repository_branch',
  'd.env_sealed',
  'd.env_digest',
] as const;

function releaseOf(d: ReleaseRow & { commit_sha: string }, config: RollbackConfig): ReleaseOf {
  return {
    id: d.release_of ?? d.id,
    commit_sha: d.commit_sha,
    git_repository: d.git_repository,
    git_repository_owner: d.git_repository_owner,
    git_repository_branch: d.git_repository_branch,
    env: config === 'release' ? { env_sealed: d.env_sealed, env_digest: d.env_digest } : undefined,
  };
}

/** The deployment the frame serves; with `sameGit`, only if it ran the frame's git settings. */
function serving(q: Queryable, frameId: string, sameGit: boolean) {
  let query = q
    .selectFrom('frames as f')
    .innerJoin('deployments as d', (j) =>
      j.on((eb) => eb('d.id', '=', eb.ref('f.serving_deployment', '->>').key('id'))),
    )
    .select(COLUMNS)
    .where('f.id', '=', frameId);
  if (sameGit)
    query = query
      .whereRef('d.git_repository', '=', 'f.git_repository')
      .whereRef('d.git_repository_owner', '=', 'f.git_repository_owner')
      .whereRef('d.git_repository_branch', '=', 'f.git_repository_branch');
  return query.executeTakeFirst();
}

/** What a restart runs: the serving release as it serves, its build and its env. */
export async function servingRelease(q: Queryable, frameId: string): Promise<ReleaseOf> {
  const d = await serving(q, frameId, false);
  if (!d?.commit_sha)
    throw conflict(
      'nothing_serving',
      'Nothing of this frame serves now, so there is nothing to restart: deploy it (POST …/deploy).',
    );
  return releaseOf({ ...d, commit_sha: d.commit_sha }, 'release');
}

/** What a rollback to the deployment runs, if it is a release whose build is still kept. */
export async function rollbackRelease(
  q: Queryable,
  frameId: string,
  deploymentId: string,
  config: RollbackConfig,
  releasesKept: number,
): Promise<ReleaseOf> {
  const d = await q
    .selectFrom('deployments as d')
    .select(COLUMNS)
    .where('d.frame_id', '=', frameId)
    .where('d.id', '=', deploymentId)
    .executeTakeFirst();
  if (!d) throw notFound('deployment');
  if (d.status !== 'succeeded' || !d.commit_sha)
    throw conflict(
      'not_a_release',
      `Deployment ${d.id} never served (it is ${d.status}): only a deployment that succeeded is a ` +
        'release to roll back to.',
    );
  // The builds of the frame's releases, newest first, each once (a restart or a rollback runs
  // an earlier one's): the agents keep the first `releasesKept` of them.
  const served = await q
    .selectFrom('deployments')
    .select((eb) => eb.fn.coalesce('release_of', 'id').as('build'))
    .where('frame_id', '=', frameId)
    .where('status', '=', 'succeeded')
    .orderBy('id', 'desc')
    .execute();
  const kept = [...new Set(served.map((r) => r.build))].slice(0, releasesKept);
  if (!kept.includes(d.release_of ?? d.id))
    throw conflict(
      'release_pruned',
      `The build of deployment ${d.id} is no longer kept (those of the last ${releasesKept} ` +
        `releases are, RELEASES_KEPT): deploy its commit ${d.commit_sha} to build it again ` +
        `(POST …/deploy with {"commit_sha": "${d.commit_sha}"}).`,
    );
  return releaseOf({ ...d, commit_sha: d.commit_sha }, config);
}

/** A configuration release: the serving build with the frame's env and settings as saved now
 *  (Heroku's config change); a build when nothing serves or the git settings moved since. */
export async function configRelease(q: Queryable, frameId: string) {
  const d = await serving(q, frameId, true);
  if (!d?.commit_sha) return undefined;
  return releaseOf({ ...d, commit_sha: d.commit_sha }, 'current');
}

/** A config release of the locked frame (?deploy=true on an env or settings write). */
export async function startConfigRelease(
  trx: Queryable,
  sealer: Sealer,
  f: LockedFrame,
  o: { actor: Actor; at: Date; keep: number; billing: 'active' | 'past_due' },
) {
  const release = await configRelease(trx, f.id);
  return startRelease(trx, sealer, f, { ...o, trigger: 'config', release });
}

/** The audit entry of each kind of deployment an actor makes. */
const AUDIT_ACTIONS = {
  manual: 'frame.deployed',
  restart: 'frame.restarted',
  rollback: 'frame.rolled_back',
  config: 'frame.config_released',
} as const;
export type ReleaseTrigger = keyof typeof AUDIT_ACTIONS;

export const billingPastDue = () =>
  new AppError(
    402,
    'billing_past_due',
    'Payment required',
    "The project owner's billing is past due; the frame stays Suspended until it is restored.",
  );

interface LockedFrame {
  id: string;
  project_id: string;
  generation: number;
  desired_state: 'running' | 'stopped';
  backoff_tripped_at: Date | null;
  agent_id: string | null;
}

/**
 * Starts a deployment an actor asked for, on the frame locked in `trx`, with its event and
 * audit entry, and tells its agent. A rollback pauses the frame's push deploys, so that the
 * next push does not undo it (as Render), until someone resumes them.
 */
export async function startRelease(
  trx: Queryable,
  sealer: Sealer,
  f: LockedFrame,
  o: {
    actor: Actor;
    trigger: ReleaseTrigger;
    at: Date;
    keep: number;
    billing: 'active' | 'past_due';
    release?: ReleaseOf;
    commitSha?: string;
  },
) {
  if (o.billing === 'past_due') throw billingPastDue();
  const { actor, trigger, at } = o;
  const d = await startDeployment(trx, sealer, f, {
    trigger,
    at,
    actorId: actor.userId,
    keep: o.keep,
    commitSha: o.commitSha,
    release: o.release,
  });
  if (trigger === 'rollback') await pausePushDeploys(trx, f.id, at, d.id);
  const detail = { deployment_id: d.id, trigger, release_of: d.release_of ?? undefined };
  await recordFrameEvent(trx, f.id, at, { type: 'deploy', actorId: actor.userId, detail });
  await recordAudit(trx, actor, at, {
    projectId: f.project_id,
    action: AUDIT_ACTIONS[trigger],
    targetType: 'frame',
    targetId: f.id,
    after: { deployment_id: d.id, ...(d.release_of ? { release_of: d.release_of } : {}) },
  });
  await refreshStatus(trx, [f.id], at);
  await notifyAgents(trx, [f.agent_id]);
  return presentDeployment(d);
}
