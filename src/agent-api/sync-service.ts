// The agent sync (CONTRACT 6): heartbeat, report and instruction in one call. The report applies
// in one transaction (sync-reports.ts); then the agent gets the whole desired state of its frames
// (desired-state.ts), or, with ?wait=, gets it when that state changes (LISTEN/NOTIFY, so a
// change made through any instance wakes it). An agent that sends the `state` of the answer it
// holds as `known_state` is told `unchanged` instead while that state is current.
import { transaction, type Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Notifier } from '../db/notifier.ts';
import type { Sealer } from '../secrets.ts';
import type { AgentIdentity } from './agents-service.ts';
import { createDesiredState } from './desired-state.ts';
import type { Memos } from '../memo.ts';
import type { HeldCount } from '../metrics/held.ts';
import { type EdgeReport, touchAgent } from './sync-dal.ts';
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
  memos?: Memos;
  /** The domain of frames' hostnames (APPS_DOMAIN). */
  appsDomain: string;
  /** Counts the long polls held now (metrics). */
  longPolls?: HeldCount;
}

export function createSyncService({
  db,
  clock,
  sealer,
  notifier,
  offlineAfterSeconds,
  schedulePullCheck,
  envCacheMaxBytes,
  appsDomain,
  memos,
  longPolls,
}: Deps) {
  const state = createDesiredState({ db, sealer, envCacheMaxBytes, appsDomain, memos });
  /** A wait for a wake-up, counted while it holds. */
  async function holding<T>(wait: Promise<T>) {
    longPolls?.inc();
    try {
      return await wait;
    } finally {
      longPolls?.dec();
    }
  }
  const touch = (agentId: string, edge?: EdgeReport) => touchAgent(db, agentId, clock.now(), edge);

  return {
    desiredState: state.desiredState,
    envCacheStats: state.envCacheStats,

    async sync(agent: AgentIdentity, body: SyncReport, waitSeconds: number, signal?: AbortSignal) {
      const now = clock.now();
      const known = body.known_state;
      const reporting = Boolean(
        body.events?.length ||
          body.logs?.length ||
          body.builds?.length ||
          body.metrics?.replicas?.length ||
          body.metrics?.requests?.length,
      );
      // Without the agent's word for what it holds, it holds what it was told before its report.
      const before =
        known === undefined && (body.events?.length || body.builds?.length)
          ? await state.digest(agent.id)
          : undefined;
      // The report's only effects outside the database are notifications, sent on commit: a
      // retried transaction repeats none of them. A returning agent is online before its
      // report is applied, so that the statuses it derives count it as such.
      // What the agent says of its edge is stored by the first statement that writes its last
      // call; a sync that does not say it (every long poll after the first) writes nothing more.
      if (reporting) {
        await touch(agent.id, body.edge);
        await transaction(db, (trx) => applyReport(trx, agent, body, now, schedulePullCheck));
      }
      // Register for wake-ups before reading, so a change in between is not missed.
      // Holding stays under the offline threshold, so a waiting agent never looks offline.
      const holdMs = Math.min(waitSeconds, 30, Math.max(1, offlineAfterSeconds / 2)) * 1000;
      const deadline = Date.now() + holdMs;
      const listening =
        notifier && holdMs > 0 ? notifier.listen('frameplane_agent', agent.id) : undefined;
      try {
        let current = reporting
          ? await state.digest(agent.id)
          : await state.touchAndDigest(agent.id, now, body.edge);
        // What the agent reported may itself have changed its instructions (a back-off trip):
        // then it must hear at once.
        const held = known ?? before ?? current;
        while (listening && current === held && !signal?.aborted) {
          const left = deadline - Date.now();
          if (left <= 0 || !(await holding(listening.next(left, signal)))) break;
          current = await state.digest(agent.id);
        }
        // An agent that went away hears nothing: no more statements (the service may be
        // stopping, its pool closing).
        if (signal?.aborted) return { unchanged: true as const, state: current, sync_after_ms: 0 };
        if (holdMs > 0) await touch(agent.id);
        // The agent's copy is current: a digest comparison is the whole answer.
        if (current === known)
          return { unchanged: true, state: current, sync_after_ms: SYNC_AFTER_MS };
        return { ...(await state.desiredState(agent.id)), sync_after_ms: SYNC_AFTER_MS };
      } finally {
        listening?.close();
      }
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
