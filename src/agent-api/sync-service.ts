// The agent sync (CONTRACT 6): heartbeat, report and instruction in one call. The report applies
// in one transaction (sync-reports.ts); then the agent gets the whole desired state of its frames
// (desired-state.ts), or, with ?wait=, gets it when that state changes (LISTEN/NOTIFY, so a
// change made through any instance wakes it).
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Notifier } from '../db/notifier.ts';
import type { Sealer } from '../secrets.ts';
import type { AgentIdentity } from './agents-service.ts';
import { createDesiredState, fingerprint } from './desired-state.ts';
import { touchAgent } from './sync-dal.ts';
import { applyReport, type SchedulePullCheck, type SyncReport } from './sync-reports.ts';

const SYNC_AFTER_MS = 5000;

interface Deps {
  db: Database;
  clock: Clock;
  sealer: Sealer;
  notifier?: Notifier;
  offlineAfterSeconds: number;
  schedulePullCheck: SchedulePullCheck;
  /** Bytes of decrypted env kept between syncs (ENV_CACHE_MAX_BYTES). */
  envCacheMaxBytes: number;
}

export function createSyncService({
  db,
  clock,
  sealer,
  notifier,
  offlineAfterSeconds,
  schedulePullCheck,
  envCacheMaxBytes,
}: Deps) {
  const state = createDesiredState({ db, sealer, envCacheMaxBytes });
  const touch = (agentId: string) => touchAgent(db, agentId, clock.now());

  return {
    desiredState: state.desiredState,
    envCacheStats: state.envCacheStats,

    async sync(agent: AgentIdentity, body: SyncReport, waitSeconds: number, signal?: AbortSignal) {
      await touch(agent.id);
      const now = clock.now();
      const reporting = Boolean(body.events?.length || body.builds?.length);
      const before = reporting ? await state.currentFingerprint(agent.id) : undefined;
      // The report's only effects outside the database are notifications, sent on commit: a
      // retried transaction repeats none of them.
      if (body.events?.length || body.logs?.length || body.builds?.length)
        await transaction(db, (trx) => applyReport(trx, agent, body, now, schedulePullCheck));
      // Register for wake-ups before reading, so a change in between is not missed.
      // Holding stays under the offline threshold, so a waiting agent never looks offline.
      const holdMs = Math.min(waitSeconds, 30, Math.max(1, offlineAfterSeconds / 2)) * 1000;
      const deadline = Date.now() + holdMs;
      const listening =
        notifier && holdMs > 0 ? notifier.listen('frameplane_agent', agent.id) : undefined;
      try {
        let frames = await state.desiredState(agent.id);
        const first = fingerprint(frames);
        // What the agent reported may itself have changed its instructions (a back-off trip):
        // then it must hear at once.
        while (listening && (before === undefined || first === before) && !signal?.aborted) {
          const left = deadline - Date.now();
          if (left <= 0 || !(await listening.next(left, signal))) break;
          if ((await state.currentFingerprint(agent.id)) === first) continue;
          frames = await state.desiredState(agent.id);
          break;
        }
        if (holdMs > 0) await touch(agent.id);
        return { frames, sync_after_ms: SYNC_AFTER_MS };
      } finally {
        listening?.close();
      }
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
