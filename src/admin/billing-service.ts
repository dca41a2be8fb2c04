// Billing (CONTRACT 7): past due suspends every frame of the user's projects and scales them to
// zero on their agents; active restores them. Each frame keeps its own desired state, so a frame
// stopped before the suspension is still Stopped after it.
import { sql } from 'kysely';
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import { notFound } from '../http/errors.ts';
import { notifyAgents, recordFrameEvent, refreshStatus } from '../frames/frame-events.ts';

export function createBillingService({ db, clock }: { db: Database; clock: Clock }) {
  return {
    async set(userId: string, status: 'active' | 'past_due') {
      const now = clock.now();
      return transaction(db, async (trx) => {
        // FOR NO KEY UPDATE: rows that merely reference the user (audit, tokens) stay insertable.
        const user = await trx
          .selectFrom('users')
          .select(['id', 'billing_status'])
          .where('id', '=', userId)
          .forNoKeyUpdate()
          .executeTakeFirst();
        if (!user) throw notFound('user');
        // Frames in id order, as the agent sync locks them.
        await trx
          .selectFrom('frames')
          .select('id')
          .where('project_id', 'in', (eb) =>
            eb.selectFrom('projects').select('id').where('owner_id', '=', userId),
          )
          .orderBy('id')
          .forUpdate()
          .execute();
        const frames =
          user.billing_status === status
            ? []
            : await trx
                .updateTable('frames')
                .set({ generation: sql`generation + 1`, updated_at: now })
                .where('project_id', 'in', (eb) =>
                  eb.selectFrom('projects').select('id').where('owner_id', '=', userId),
                )
                .returning(['id', 'agent_id'])
                .execute();
        await trx
          .updateTable('users')
          .set({ billing_status: status })
          .where('id', '=', userId)
          .execute();
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
