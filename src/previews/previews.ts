// Preview frames (issue 36), made, updated and removed in the transaction of the delivery that
// asks for it (webhooks/) or of the sweep that expires them (jobs/sweeper.ts). A preview is a
// frame of the parent's project and space: billed and shared like it, with the parent's settings,
// its env plus its preview overrides as they are when the preview is made, the pushed branch,
// and its own hostname; never the parent's custom domains nor its volumes. Later pushes deploy
// it as they deploy any frame; its env is then its own (set it on the preview).
import type { Queryable } from '../db/database.ts';
import type { Sealer } from '../secrets.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { newId } from '../ids.ts';
import { envSnapshot, startDeployment } from '../deployments/deployments.ts';
import { setEnvDigest, upsertEnv } from '../env/env-dal.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';
import { removeFrame } from '../frames/frame-removal.ts';
import { insertFrame } from '../frames/frames-dal.ts';
import { leastLoadedCloudAgent } from '../frames/placement-dal.ts';
import * as dal from './previews-dal.ts';
import { type HookEvent, previewExpiry, previewName } from './preview-events.ts';

export interface PreviewOutcome {
  frame_id: string;
  preview_of: string;
  branch: string;
  action: 'created' | 'updated' | 'deleted' | 'skipped';
  deployment_id: string | null;
  skipped?: string;
}

type Parent = NonNullable<Awaited<ReturnType<typeof dal.lockFrameWithBilling>>>;
interface Ctx {
  trx: Queryable;
  sealer: Sealer;
  /** Deployments kept per frame (DEPLOYMENT_HISTORY). */
  keep: number;
  at: Date;
}
interface Push {
  branch: string;
  commit: string | null;
  pullRequest?: number;
}

/** A new preview of `parent`, deployed at the pushed commit. */
async function create(c: Ctx, parent: Parent, p: Push) {
  const { trx, at } = c;
  const agentId =
    parent.runtime_kind === 'agent' ? parent.agent_id : await leastLoadedCloudAgent(trx);
  const frame = await insertFrame(trx, () => newId('frame', at), {
    project_id: parent.project_id,
    space_id: parent.space_id,
    owner_id: parent.owner_id,
    name: previewName(parent.name, p.branch),
    git_repository: parent.git_repository,
    git_repository_owner: parent.git_repository_owner,
    git_repository_branch: p.branch,
    port: parent.port,
    replica_count: parent.replica_count,
    health_check_path: parent.health_check_path,
    runtime_kind: parent.runtime_kind,
    agent_id: agentId,
    env_digest: c.sealer.digest('{}'),
    created_at: at,
    updated_at: at,
    preview_of: parent.id,
    preview_branch: p.branch,
    preview_pull_request: p.pullRequest ?? null,
    preview_pushed_at: at,
    preview_expires_at: previewExpiry(at, parent.previews_ttl_days),
  });
  await dal.copyEnv(trx, parent.id, frame.id);
  const overrides = parent.previews_env_sealed
    ? (JSON.parse(c.sealer.open(parent.previews_env_sealed)) as Record<string, string>)
    : {};
  const rows = Object.entries(overrides).map(([key, v]) => ({
    key,
    value_sealed: c.sealer.seal(v),
  }));
  if (rows.length) await upsertEnv(trx, frame.id, rows);
  await setEnvDigest(trx, frame.id, (await envSnapshot(trx, c.sealer, frame.id)).digest, at);
  const detail = { preview_of: parent.id, branch: p.branch, pull_request: p.pullRequest ?? null };
  await recordFrameEvent(trx, frame.id, at, { type: 'created', detail });
  await recordFrameEvent(trx, parent.id, at, {
    type: 'preview_created',
    detail: { ...detail, preview_of: undefined, frame_id: frame.id },
  });
  await recordAudit(trx, null, at, {
    projectId: parent.project_id,
    action: 'frame.preview_created',
    targetType: 'frame',
    targetId: frame.id,
    after: detail,
  });
  return frame;
}

/** Makes or updates the parent's preview of the pushed branch. */
async function upsert(c: Ctx, parentId: string, p: Push): Promise<PreviewOutcome | undefined> {
  const parent = await dal.lockFrameWithBilling(c.trx, parentId);
  if (!parent?.previews_enabled) return undefined;
  const outcome = { preview_of: parent.id, branch: p.branch };
  const existing = await dal.lockPreview(c.trx, parent.id, p.branch);
  if (parent.billing_status === 'past_due') {
    const frame_id = existing?.id ?? parent.id;
    return {
      ...outcome,
      frame_id,
      action: 'skipped',
      deployment_id: null,
      skipped: 'billing_past_due',
    };
  }
  const frame = existing ?? (await create(c, parent, p));
  const expiresAt = previewExpiry(c.at, parent.previews_ttl_days);
  await dal.pushedPreview(c.trx, frame.id, { at: c.at, expiresAt, pullRequest: p.pullRequest });
  const action = existing ? 'updated' : 'created';
  const skip = (skipped: string): PreviewOutcome => ({
    ...outcome,
    frame_id: frame.id,
    action: 'skipped',
    deployment_id: null,
    skipped,
  });
  if (existing?.push_deploys_paused_at) return skip('push_deploys_paused');
  // A pull request's update and the push under it name the same commit: deploy it once.
  const latest = existing && (await dal.latestOf(c.trx, frame.id));
  if (p.commit && latest?.commit_sha === p.commit && latest.status !== 'failed')
    return skip('already_deployed');
  const d = await startDeployment(c.trx, c.sealer, frame, {
    trigger: 'push',
    at: c.at,
    actorId: null,
    commitSha: p.commit,
    keep: c.keep,
  });
  const detail = { deployment_id: d.id, trigger: 'push', commit_sha: p.commit };
  await recordFrameEvent(c.trx, frame.id, c.at, { type: 'deploy', detail });
  await notifyAgents(c.trx, [frame.agent_id]);
  await refreshStatus(c.trx, [frame.id], c.at);
  return { ...outcome, frame_id: frame.id, action, deployment_id: d.id };
}

/** Removes a preview, saying why on its parent and in the audit log. */
export async function removePreview(trx: Queryable, frameId: string, at: Date, reason: string) {
  const f = await dal.lockFrameWithBilling(trx, frameId);
  if (!f?.preview_of) return undefined;
  await removeFrame(trx, f);
  const detail = { frame_id: f.id, branch: f.preview_branch, reason };
  await recordFrameEvent(trx, f.preview_of, at, { type: 'preview_deleted', detail });
  await recordAudit(trx, null, at, {
    projectId: f.project_id,
    action: 'frame.preview_deleted',
    targetType: 'frame',
    targetId: f.id,
    before: { name: f.name, branch: f.preview_branch },
    after: { reason },
  });
  const outcome: PreviewOutcome = {
    frame_id: f.id,
    preview_of: f.preview_of,
    branch: f.preview_branch ?? '',
    action: 'deleted',
    deployment_id: null,
  };
  return outcome;
}

/** What a verified delivery does to the previews of the projects' frames. */
export async function applyToPreviews(
  c: Ctx,
  projectIds: string[],
  repo: { owner: string; repo: string },
  ev: HookEvent,
): Promise<PreviewOutcome[]> {
  const out: PreviewOutcome[] = [];
  if (ev.kind === 'branch_deleted' || ev.kind === 'pull_request_closed') {
    const reason = ev.kind === 'branch_deleted' ? 'branch_deleted' : 'pull_request_closed';
    for (const { id } of await dal.previewsOfBranch(c.trx, projectIds, repo, ev.branch)) {
      const removed = await removePreview(c.trx, id, c.at, reason);
      if (removed) out.push(removed);
    }
    return out;
  }
  const base = ev.kind === 'pull_request' ? ev.base : undefined;
  const parents = await dal.previewParents(c.trx, projectIds, repo, {
    branch: base,
    notBranch: ev.branch,
  });
  const pullRequest = ev.kind === 'pull_request' ? ev.number : undefined;
  for (const { id } of parents) {
    const done = await upsert(c, id, { branch: ev.branch, commit: ev.commit, pullRequest });
    if (done) out.push(done);
  }
  return out;
}
