// Git push webhooks (CONTRACT 5): GitHub-compatible push events, signed with HMAC-SHA256 under a
// per-project secret (X-Hub-Signature-256), deploy every frame of that project watching the
// pushed repository and branch. A bad signature is 401 and changes nothing. A frame whose push
// deploys are paused (after a rollback, deployments/releases.ts) is skipped, and says so in its
// events. A push to another branch, or a pull_request event, makes, updates or removes the
// preview frames of the frames that opted in (previews/), in the same transaction.
//
// Against replay and probing:
// - Nothing about the projects is revealed before a signature verifies: an unsigned or badly
//   signed push is 401 `invalid_signature`, with the same body, whether or not any frame watches
//   that repository and branch, and whatever project `?project` names.
// - A delivery is applied once per project: its body's SHA-256 (covered by the signature) and its
//   X-GitHub-Delivery id (not covered, so only a second key) are remembered for
//   DELIVERY_MEMORY_DAYS; a repeat answers 200 `{duplicate: true}` and deploys nothing. The row is
//   written in the deployments' transaction under a unique key (ON CONFLICT DO NOTHING), so of
//   concurrent copies exactly one deploys.
// - A push whose signed `repository.pushed_at` is older than DELIVERY_MEMORY_DAYS is refused
//   (422 `stale_delivery`): it could otherwise outlive its memory and roll a frame back. A
//   delivery without pushed_at (hosts other than GitHub) is protected by the memory alone.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Sealer } from '../secrets.ts';
import { newSecret } from '../secrets.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { AppError, unprocessable } from '../errors.ts';
import { startDeployment } from '../deployments/deployments.ts';
import { type HookBody, hookEventOf } from '../previews/preview-events.ts';
import { applyToPreviews, type PreviewOutcome } from '../previews/previews.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';
import {
  forgetExpiredDeliveries,
  framesWatchingBranch,
  lockFrame,
  lockFramesOfRepository,
  projectsWatching,
  rememberDelivery,
  sealedSecretOf,
  sealedSecretsOf,
  storeSecret,
} from './webhook-dal.ts';

export interface PushEvent extends HookBody {
  repository?: { name?: string; owner?: { login?: string; name?: string }; pushed_at?: unknown };
}

/** How long a delivery is remembered, and how old a push may be to be applied. */
export const DELIVERY_MEMORY_DAYS = 7;
const MEMORY_MS = DELIVERY_MEMORY_DAYS * 86400_000;

/** GitHub's push events carry pushed_at in Unix seconds; other events an ISO 8601 string. */
function pushedAtOf(body: PushEvent): Date | null {
  const v = body.repository?.pushed_at;
  const ms = typeof v === 'number' ? v * 1000 : typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? new Date(ms) : null;
}

export interface HookAnswer {
  event: string;
  duplicate?: boolean;
  deployments: Array<{ frame_id: string; deployment_id: string | null; skipped?: string }>;
  previews: PreviewOutcome[];
}

const badSignature = () =>
  new AppError(
    401,
    'invalid_signature',
    'Unauthorized',
    'The X-Hub-Signature-256 header does not match this payload and secret.',
  );

export function signatureMatches(
  secret: string,
  rawBody: string,
  header: string | undefined,
): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(header.slice(7).toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface Deps {
  db: Database;
  clock: Clock;
  access: AccessService;
  sealer: Sealer;
  publicUrl: string;
  /** Deployments kept per frame (DEPLOYMENT_HISTORY). */
  deploymentHistory: number;
}

export function createWebhookService({
  db,
  clock,
  access,
  sealer,
  publicUrl,
  deploymentHistory,
}: Deps) {
  const urlFor = (projectId: string) => `${publicUrl}/v2/hooks/git?project=${projectId}`;

  async function secretOf(projectId: string, rotate: boolean) {
    const existing = await sealedSecretOf(db, projectId);
    if (existing !== undefined && !rotate) return sealer.open(existing);
    await storeSecret(db, projectId, sealer.seal(newSecret('whsec')), clock.now(), rotate);
    // Two first reads at once: whichever secret was stored is the secret.
    const stored = await sealedSecretOf(db, projectId);
    if (stored === undefined) throw new Error(`the webhook secret of ${projectId} was not stored`);
    return sealer.open(stored);
  }

  return {
    async show(actor: Actor, projectId: string) {
      await access.requireProject(actor.userId, projectId, 'webhook.manage');
      return {
        url: urlFor(projectId),
        secret: await secretOf(projectId, false),
        content_type: 'application/json',
        events: ['push'],
      };
    },

    async rotate(actor: Actor, projectId: string) {
      await access.requireProject(actor.userId, projectId, 'webhook.manage');
      const secret = await secretOf(projectId, true);
      await recordAudit(db, actor, clock.now(), {
        projectId,
        action: 'webhook.rotated',
        targetType: 'project',
        targetId: projectId,
      });
      return { url: urlFor(projectId), secret, content_type: 'application/json', events: ['push'] };
    },

    /** Verifies and applies one delivery; answers which frames it deployed. */
    async receive(o: {
      event: string | undefined;
      signature: string | undefined;
      rawBody: string;
      body: PushEvent;
      projectId?: string;
      deliveryId?: string;
    }): Promise<HookAnswer> {
      const repo = o.body.repository?.name;
      const owner = o.body.repository?.owner?.login ?? o.body.repository?.owner?.name;
      // The projects whose secret may have signed this: the one named in the URL, or those with
      // frames watching the repository (any branch, so that a signed push to another branch is
      // acknowledged rather than refused). Whichever it is, nothing is answered until a secret
      // verifies: no candidate, no secret yet, or no match are the same 401.
      let candidates: string[] = [];
      if (o.projectId) candidates = [o.projectId];
      else if (repo && owner) candidates = await projectsWatching(db, owner, repo);
      const rows = await sealedSecretsOf(db, candidates);
      // One HMAC even with no secret to try, so that "nothing watches this" is not cheaper to answer.
      if (rows.length === 0)
        signatureMatches(randomBytes(32).toString('hex'), o.rawBody, o.signature);
      const verified = rows
        .filter((r) => signatureMatches(sealer.open(r.secret_sealed), o.rawBody, o.signature))
        .map((r) => r.project_id)
        .sort();
      if (verified.length === 0) throw badSignature();
      const event = o.event ?? 'push';
      const hook = hookEventOf(o.event, o.body);
      if (!repo || !owner || !hook) return { event, deployments: [], previews: [] };

      const now = clock.now();
      const pushedAt = pushedAtOf(o.body);
      if (pushedAt && now.getTime() - pushedAt.getTime() > MEMORY_MS) {
        throw unprocessable(
          'stale_delivery',
          `This push was made more than ${DELIVERY_MEMORY_DAYS} days ago (repository.pushed_at ${pushedAt.toISOString()}); ` +
            'an old delivery is not applied, so that a replay cannot roll a frame back. Push again, or deploy the frame by hand.',
        );
      }
      const bodySha = createHash('sha256').update(o.rawBody).digest('hex');
      const deliveryId = o.deliveryId && o.deliveryId.length <= 200 ? o.deliveryId : null;
      // Remembered for as long as it could be applied: until it is stale, or for the whole
      // memory when it carries no time of its own.
      const keepUntil = new Date((pushedAt ?? now).getTime() + MEMORY_MS);
      // Forget what has expired; outside the transaction below, so deliveries never wait on it.
      await forgetExpiredDeliveries(db, now);

      return transaction(db, async (trx): Promise<HookAnswer> => {
        // Remember the delivery first, so that of concurrent copies exactly one deploys. The
        // projects that had already seen it deploy nothing.
        const fresh = await rememberDelivery(trx, verified, {
          bodySha,
          deliveryId,
          receivedAt: now,
          keepUntil,
        });
        if (fresh.length === 0) return { event, duplicate: true, deployments: [], previews: [] };

        await lockFramesOfRepository(trx, fresh, { owner, repo });
        const ctx = { trx, sealer, keep: deploymentHistory, at: now };
        const previews = await applyToPreviews(ctx, fresh, { owner, repo }, hook);
        if (hook.kind !== 'push') return { event, deployments: [], previews };
        const commit = hook.commit;
        const frames = await framesWatchingBranch(trx, fresh, { owner, repo, branch: hook.branch });
        const deployments: HookAnswer['deployments'] = [];
        for (const row of frames) {
          const f = await lockFrame(trx, row.id);
          if (row.billing_status === 'past_due') {
            deployments.push({ frame_id: f.id, deployment_id: null, skipped: 'billing_past_due' });
            continue;
          }
          // Paused by a rollback (or by hand): the push is told on the frame, not deployed.
          if (f.push_deploys_paused_at) {
            await recordFrameEvent(trx, f.id, now, {
              type: 'push_skipped',
              detail: { commit_sha: commit, reason: 'push_deploys_paused' },
            });
            deployments.push({
              frame_id: f.id,
              deployment_id: null,
              skipped: 'push_deploys_paused',
            });
            continue;
          }
          const d = await startDeployment(trx, sealer, f, {
            trigger: 'push',
            at: now,
            actorId: null,
            commitSha: commit,
            keep: deploymentHistory,
          });
          await recordFrameEvent(trx, f.id, now, {
            type: 'deploy',
            detail: { deployment_id: d.id, trigger: 'push', commit_sha: commit },
          });
          await notifyAgents(trx, [f.agent_id]);
          deployments.push({ frame_id: f.id, deployment_id: d.id });
        }
        await refreshStatus(
          trx,
          frames.map((f) => f.id),
          now,
        );
        return { event, deployments, previews };
      });
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
