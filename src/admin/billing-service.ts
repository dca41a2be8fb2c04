// Billing (CONTRACT 7, and 3a for organizations): past due suspends every frame of the projects
// a payer (a user, or an org) pays for and scales them to zero on their agents; active restores
// them. Each frame keeps its own desired state, so a frame stopped before the suspension is still
// Stopped after it. A user's billing moves only the projects the user owns (owner_id): an org's
// projects have no owner_id and follow the org's billing.
import { transaction, type Database, type Queryable } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { notFound } from '../errors.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';
import {
  type BillingStatus,
  bumpFramesIn,
  type FrameScope,
  lockFramesIn,
  lockPayer,
  lockProjectsOf,
  type Payer,
  setBillingStatus,
} from './billing-dal.ts';

/**
 * The frames in scope now answer to `status` (their payer's billing changed, or their project
 * has a payer of another status): each records `suspended` or `restored`, its derived status is
 * refreshed, and its agent re-reads it. The caller holds the frames' locks (lockFramesIn) and has
 * already written what changed the status. Returns how many frames moved.
 */
export async function billingChanged(
  trx: Queryable,
  scope: FrameScope,
  status: BillingStatus,
  now: Date,
) {
  const frames = await bumpFramesIn(trx, scope, now);
  for (const f of frames)
    await recordFrameEvent(trx, f.id, now, {
      type: status === 'past_due' ? 'suspended' : 'restored',
      detail: { billing_status: status },
    });
  await refreshStatus(
    trx,
    frames.map((f) => f.id),
    now,
  );
  await notifyAgents(
    trx,
    frames.map((f) => f.agent_id),
  );
  return frames.length;
}

export function createBillingService({ db, clock }: { db: Database; clock: Clock }) {
  async function set(payer: Payer, status: BillingStatus) {
    const now = clock.now();
    return transaction(db, async (trx) => {
      // In the order of a transfer (transfers-service.ts): an org's row before its projects,
      // a user's projects before the user's row; then the frames.
      if (payer.kind === 'user') await lockProjectsOf(trx, payer);
      const before = await lockPayer(trx, payer, 'change');
      if (!before) throw notFound(payer.kind === 'user' ? 'user' : 'org');
      if (payer.kind === 'org') await lockProjectsOf(trx, payer);
      await lockFramesIn(trx, payer);
      await setBillingStatus(trx, payer, status);
      return before.billing_status === status ? 0 : billingChanged(trx, payer, status, now);
    });
  }

  return {
    async setUser(userId: string, status: BillingStatus) {
      const framesAffected = await set({ kind: 'user', id: userId }, status);
      return { user_id: userId, status, frames_affected: framesAffected };
    },

    async setOrg(orgId: string, status: BillingStatus) {
      const framesAffected = await set({ kind: 'org', id: orgId }, status);
      return { org_id: orgId, status, frames_affected: framesAffected };
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
