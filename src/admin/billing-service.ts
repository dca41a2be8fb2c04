// Billing (CONTRACT 7): past due suspends every frame of the user's projects and scales them to
// zero on their agents; active restores them. Each frame keeps its own desired state, so a frame
// stopped before the suspension is still Stopped after it.
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { notFound } from '../errors.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';
import {
  bumpOwnedFrames,
  lockOwnedFrames,
  lockUserBilling,
  setBillingStatus,
} from './billing-dal.ts';

export function createBillingService({ db, clock }: { db: Database; clock: Clock }) {
  return {
    async set(userId: string, status: 'active' | 'past_due') {
      const now = clock.now();
      return transaction(db, async (trx) => {
        const user = await lockUserBilling(trx, userId);
        if (!user) throw notFound('user');
        await lockOwnedFrames(trx, userId);
        const frames =
          user.billing_status === status ? [] : await bumpOwnedFrames(trx, userId, now);
        await setBillingStatus(trx, userId, status);
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
        return { user_id: userId, status, frames_affected: frames.length };
      });
    },
  };
}

export type BillingService = ReturnType<typeof createBillingService>;
