// Git push webhooks (CONTRACT 5): GitHub-compatible push events, signed with HMAC-SHA256 under a
// per-project secret (X-Hub-Signature-256), deploy every frame of that project watching the
// pushed repository and branch. A bad signature is 401 and changes nothing.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Sealer } from '../secrets.ts';
import { newSecret } from '../secrets.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { AppError } from '../http/errors.ts';
import { startDeployment } from '../frames/deployments.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';

export interface PushEvent { ref?: string; after?: string; deleted?: boolean; repository?: { name?: string; owner?: { login?: string; name?: string } } }

const badSignature = () => new AppError(401, 'invalid_signature', 'Unauthorized', 'The X-Hub-Signature-256 header does not match this payload and secret.');

export function signatureMatches(secret: string, rawBody: string, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(header.slice(7).toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface Deps { db: Database; clock: Clock; access: AccessService; sealer: Sealer; publicUrl: string }

export function createWebhookService({ db, clock, access, sealer, publicUrl }: Deps) {
  const urlFor = (projectId: string) => `${publicUrl}/v2/hooks/git?project=${projectId}`;

  async function secretOf(projectId: string, rotate: boolean) {
    const existing = await db.selectFrom('project_webhooks').select('secret_sealed').where('project_id', '=', projectId).executeTakeFirst();
    if (existing && !rotate) return sealer.open(existing.secret_sealed);
    const secret = newSecret('whsec');
    await db.insertInto('project_webhooks').values({ project_id: projectId, secret_sealed: sealer.seal(secret), rotated_at: clock.now() })
      .onConflict((oc) => (rotate ? oc.column('project_id').doUpdateSet({ secret_sealed: sealer.seal(secret), rotated_at: clock.now() }) : oc.column('project_id').doNothing()))
      .execute();
    // Two first reads at once: whichever secret was stored is the secret.
    const stored = await db.selectFrom('project_webhooks').select('secret_sealed').where('project_id', '=', projectId).executeTakeFirstOrThrow();
    return sealer.open(stored.secret_sealed);
  }

  return {
    async show(actor: Actor, projectId: string) {
      await access.requireProject(actor.userId, projectId, 'webhook.manage');
      return { url: urlFor(projectId), secret: await secretOf(projectId, false), content_type: 'application/json', events: ['push'] };
    },

    async rotate(actor: Actor, projectId: string) {
      await access.requireProject(actor.userId, projectId, 'webhook.manage');
      const secret = await secretOf(projectId, true);
      await recordAudit(db, actor, clock.now(), { projectId, action: 'webhook.rotated', targetType: 'project', targetId: projectId });
      return { url: urlFor(projectId), secret, content_type: 'application/json', events: ['push'] };
    },

    /** Verifies and applies one delivery; answers which frames it deployed. */
    async receive(o: { event: string | undefined; signature: string | undefined; rawBody: string; body: PushEvent; projectId?: string }) {
      const repo = o.body.repository?.name;
      const owner = o.body.repository?.owner?.login ?? o.body.repository?.owner?.name;
      const branch = o.body.ref?.startsWith('refs/heads/') ? o.body.ref.slice('refs/heads/'.length) : undefined;
      // The projects whose secret may have signed this: the one named in the URL, or those with
      // frames watching the repository and branch.
      let candidates: string[];
      if (o.projectId) candidates = [o.projectId];
      else if (repo && owner && branch) {
        candidates = (await db.selectFrom('frames').select('project_id').distinct()
          .where(sql`lower(git_repository_owner)`, '=', owner.toLowerCase()).where(sql`lower(git_repository)`, '=', repo.toLowerCase())
          .where('git_repository_branch', '=', branch).execute()).map((r) => r.project_id);
        if (candidates.length === 0) return { event: o.event ?? 'push', deployments: [] };
      } else throw badSignature();
      const rows = await db.selectFrom('project_webhooks').select(['project_id', 'secret_sealed']).where('project_id', 'in', candidates).execute();
      const verified = rows.filter((r) => signatureMatches(sealer.open(r.secret_sealed), o.rawBody, o.signature)).map((r) => r.project_id);
      if (verified.length === 0) throw badSignature();
      if (o.event === 'ping' || !repo || !owner || !branch || o.body.deleted) return { event: o.event ?? 'push', deployments: [] };

      const now = clock.now();
      const commit = typeof o.body.after === 'string' && /^[0-9a-f]{7,64}$/i.test(o.body.after) ? o.body.after : null;
      return transaction(db, async (trx) => {
        const frames = await trx.selectFrom('frames as f').innerJoin('projects as p', 'p.id', 'f.project_id').innerJoin('users as u', 'u.id', 'p.owner_id')
          .select(['f.id', 'u.billing_status']).where('f.project_id', 'in', verified)
          .where(sql`lower(f.git_repository_owner)`, '=', owner.toLowerCase()).where(sql`lower(f.git_repository)`, '=', repo.toLowerCase())
          .where('f.git_repository_branch', '=', branch).orderBy('f.id').execute();
        const deployments: Array<{ frame_id: string; deployment_id: string | null; skipped?: string }> = [];
        for (const row of frames) {
          const f = await trx.selectFrom('frames').selectAll().where('id', '=', row.id).forUpdate().executeTakeFirstOrThrow();
          if (row.billing_status === 'past_due') { deployments.push({ frame_id: f.id, deployment_id: null, skipped: 'billing_past_due' }); continue; }
          const d = await startDeployment(trx, sealer, f, { trigger: 'push', at: now, actorId: null, commitSha: commit });
          await recordFrameEvent(trx, f.id, now, { type: 'deploy', detail: { deployment_id: d.id, trigger: 'push', commit_sha: commit } });
          await notifyAgents(trx, [f.agent_id]);
          deployments.push({ frame_id: f.id, deployment_id: d.id });
        }
        await refreshStatus(trx, frames.map((f) => f.id), now);
        return { event: o.event ?? 'push', deployments };
      });
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
