// Stop, start and deploy (spec 3 and 4, CONTRACT 5). Each is one transaction on the locked
// frame: the desired state changes together with its event, and the agent is told on commit.
// Every request records exactly one event, no-ops included, so parallel requests stay traceable.
import { sql } from 'kysely';
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Actor } from '../actor.ts';
import type { AccessService } from '../access/access-service.ts';
import type { Sealer } from '../secrets.ts';
import { recordAudit } from '../audit/audit-dal.ts';
import { AppError, serviceUnavailable } from '../http/errors.ts';
import { decodeCursor, toPage } from '../http/schemas.ts';
import { presentDeployment, startDeployment } from './deployments.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from './frame-events.ts';
import { lockFrame } from './frames-dal.ts';
import type { FramesService } from './frames-service.ts';

interface Deps {
  db: Database; clock: Clock; access: AccessService; sealer: Sealer; frames: Pick<FramesService, 'load' | 'view'>;
  offlineAfterSeconds: number;
}

export const billingPastDue = () =>
  new AppError(402, 'billing_past_due', 'Payment required', "The project owner's billing is past due; the frame stays Suspended until it is restored.");

export function createFrameOpsService({ db, clock, access, sealer, frames, offlineAfterSeconds }: Deps) {
  /** Self-hosted frames need their agent online to be stopped or started; cloud frames never wait. */
  async function requireAgentOnline(q: Queryable, agentId: string | null, kind: 'cloud' | 'agent') {
    if (kind !== 'agent' || !agentId) return;
    const agent = await q.selectFrom('agents').select(['id', 'last_seen_at']).where('id', '=', agentId).executeTakeFirst();
    const now = clock.now();
    const seen = agent?.last_seen_at ?? null;
    if (seen && now.getTime() - seen.getTime() <= offlineAfterSeconds * 1000) return;
    throw serviceUnavailable('agent_offline',
      `The frame's self-hosted agent is offline (last seen ${seen ? seen.toISOString() : 'never'}); try again when it is back.`,
      Math.max(5, Math.min(60, offlineAfterSeconds)));
  }

  async function pastDue(q: Queryable, projectId: string) {
    const row = await q.selectFrom('projects as p').innerJoin('users as u', 'u.id', 'p.owner_id').select('u.billing_status')
      .where('p.id', '=', projectId).executeTakeFirstOrThrow();
    return row.billing_status === 'past_due';
  }

  async function setDesired(actor: Actor, projectId: string, spaceId: string, frameId: string, desired: 'running' | 'stopped') {
    await access.requireProject(actor.userId, projectId, 'frame.operate');
    const now = clock.now();
    // The answer is read inside the transaction: it shows this request's outcome, not a later one.
    return transaction(db, async (trx) => {
      await frames.load(projectId, spaceId, frameId, trx);
      const f = (await lockFrame(trx, frameId))!;
      await requireAgentOnline(trx, f.agent_id, f.runtime_kind);
      if (desired === 'running' && (await pastDue(trx, projectId))) throw billingPastDue();
      const noop = f.desired_state === desired;
      if (!noop) {
        await trx.updateTable('frames').set({
          desired_state: desired, generation: sql`generation + 1`, version: sql`version + 1`, updated_at: now,
          // A start is a fresh attempt: it clears a back-off trip (as a push or a deploy does).
          ...(desired === 'running' ? { crash_streak: 0, backoff_tripped_at: null } : {}),
        }).where('id', '=', frameId).execute();
      }
      const type = desired === 'running' ? 'start' : 'stop';
      await recordFrameEvent(trx, frameId, now, { type, actorId: actor.userId, detail: { noop } });
      if (!noop) await recordAudit(trx, actor, now, { projectId, action: `frame.${type}`, targetType: 'frame', targetId: frameId, before: { desired_state: f.desired_state }, after: { desired_state: desired } });
      await refreshStatus(trx, [frameId], now);
      if (!noop) await notifyAgents(trx, [f.agent_id]);
      return frames.view(await frames.load(projectId, spaceId, frameId, trx));
    });
  }

  return {
    stop: (actor: Actor, p: string, s: string, f: string) => setDesired(actor, p, s, f, 'stopped'),
    start: (actor: Actor, p: string, s: string, f: string) => setDesired(actor, p, s, f, 'running'),

    async deploy(actor: Actor, projectId: string, spaceId: string, frameId: string) {
      await access.requireProject(actor.userId, projectId, 'frame.operate');
      const now = clock.now();
      return transaction(db, async (trx) => {
        await frames.load(projectId, spaceId, frameId, trx);
        const f = (await lockFrame(trx, frameId))!;
        if (await pastDue(trx, projectId)) throw billingPastDue();
        const d = await startDeployment(trx, sealer, f, { trigger: 'manual', at: now, actorId: actor.userId });
        await recordFrameEvent(trx, frameId, now, { type: 'deploy', actorId: actor.userId, detail: { deployment_id: d.id, trigger: 'manual' } });
        await recordAudit(trx, actor, now, { projectId, action: 'frame.deployed', targetType: 'frame', targetId: frameId, after: { deployment_id: d.id } });
        await refreshStatus(trx, [frameId], now);
        await notifyAgents(trx, [f.agent_id]);
        return presentDeployment(d);
      });
    },

    async deployments(actor: Actor, projectId: string, spaceId: string, frameId: string, limit: number, cursor?: string) {
      await access.requireProject(actor.userId, projectId, 'project.read');
      await frames.load(projectId, spaceId, frameId);
      let q = db.selectFrom('deployments').selectAll().where('frame_id', '=', frameId);
      const before = decodeCursor(cursor, 1)?.[0];
      if (before) q = q.where('id', '<', before);
      return toPage(await q.orderBy('id', 'desc').limit(limit + 1).execute(), limit, (d) => [d.id], presentDeployment);
    },
  };
}

export type FrameOpsService = ReturnType<typeof createFrameOpsService>;
