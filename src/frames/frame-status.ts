// A frame's status, derived and never set by hand (spec 3, CONTRACT 5): one pure function of
// billing, desired state, the back-off trip, the deployment in progress and what the runtime
// last observed of each replica. Routes, the agent sync and the sweeper all call it.

export const FRAME_STATUSES = ['Starting', 'Online', 'Degraded', 'Error', 'Stopped', 'Suspended'] as const;
export type FrameStatus = (typeof FRAME_STATUSES)[number];

export const REPLICA_STATES = ['pulling', 'starting', 'healthy', 'unhealthy', 'crashed', 'oom', 'stopped'] as const;
export type ReplicaState = (typeof REPLICA_STATES)[number];

export type ErrorReason = 'crash' | 'oom' | 'health_check_failed' | 'image_pull_failed';
export type StatusReason = ErrorReason | 'backoff_tripped' | 'billing_past_due' | 'stopping' | null;

export interface ObservedReplica {
  state: ReplicaState;
  /** A failed image pull is reported as a crash with this detail. */
  pullFailed?: boolean;
}

export interface FrameFacts {
  billingPastDue: boolean;
  desiredState: 'running' | 'stopped';
  backoffTripped: boolean;
  deployInProgress: boolean;
  replicaCount: number;
  /** Replicas of the current deployment, by index; undefined where one has not reported yet. */
  replicas: Array<ObservedReplica | undefined>;
}

const RUNNING: ReadonlySet<ReplicaState> = new Set(['pulling', 'starting', 'healthy', 'unhealthy']);

function failureReason(r: ObservedReplica): ErrorReason | undefined {
  if (r.pullFailed) return 'image_pull_failed';
  if (r.state === 'crashed') return 'crash';
  if (r.state === 'oom') return 'oom';
  if (r.state === 'unhealthy') return 'health_check_failed';
  return undefined;
}

export function frameStatus(f: FrameFacts): { status: FrameStatus; reason: StatusReason } {
  if (f.billingPastDue) return { status: 'Suspended', reason: 'billing_past_due' };
  if (f.desiredState === 'stopped') {
    if (f.backoffTripped) return { status: 'Stopped', reason: 'backoff_tripped' };
    // Stopped as soon as it is asked for; the reason says the runtime is still winding down.
    return { status: 'Stopped', reason: f.replicas.some((r) => r && RUNNING.has(r.state)) ? 'stopping' : null };
  }
  // Replicas beyond replica_count (left over from a scale-down) do not count.
  const wanted = f.replicas.slice(0, f.replicaCount);
  const replicas = wanted.filter((r): r is ObservedReplica => r !== undefined);
  if (f.deployInProgress || replicas.some((r) => r.state === 'pulling' || r.state === 'starting')) {
    return { status: 'Starting', reason: null };
  }
  const healthy = replicas.filter((r) => r.state === 'healthy').length;
  if (healthy >= f.replicaCount) return { status: 'Online', reason: null };
  const failures = replicas.map(failureReason).filter((x): x is ErrorReason => x !== undefined);
  if (healthy > 0) return { status: 'Degraded', reason: failures[0] ?? null };
  if (failures.length > 0) return { status: 'Error', reason: failures[0] };
  // Nothing healthy and nothing failed: replicas have not come up (or were stopped) yet.
  return { status: 'Starting', reason: null };
}
