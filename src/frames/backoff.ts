// Automatic back-off (spec 3 and 8, CONTRACT 5): five crash events in a row with no replica
// becoming healthy between them, or one replica pulling its image for more than three minutes
// of service time, stop the frame with reason backoff_tripped. Pure; used by the agent sync and
// by the sweeper.
import type { ReplicaState } from './frame-status.ts';

export const CRASH_THRESHOLD = 5;
export const PULL_TIMEOUT_SECONDS = 180;
export const CLEARS_ON = ['push', 'deploy', 'start'] as const;

export interface CrashCount {
  streak: number;
  trip: boolean;
}

/** The crash streak after one replica event. */
export function afterEvent(streak: number, type: ReplicaState): CrashCount {
  if (type === 'crashed' || type === 'oom') {
    const next = streak + 1;
    return { streak: next, trip: next >= CRASH_THRESHOLD };
  }
  if (type === 'healthy') return { streak: 0, trip: false };
  return { streak, trip: false };
}

/** True once a replica has been pulling for longer than the limit. */
export function pullStuck(pullingSince: Date | null, now: Date): boolean {
  return (
    pullingSince !== null && now.getTime() - pullingSince.getTime() > PULL_TIMEOUT_SECONDS * 1000
  );
}

/** When a replica pulling since `since` will be stuck, for scheduling the check. */
export const pullDeadline = (since: Date) =>
  new Date(since.getTime() + PULL_TIMEOUT_SECONDS * 1000 + 1);
