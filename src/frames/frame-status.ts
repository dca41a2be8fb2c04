// A frame's status, derived and never set by hand (spec 3, CONTRACT 5): one pure function of
// billing, desired state, the back-off trip, the deployment in progress and what the runtime
// last observed of each replica. Routes, the agent sync and the sweeper all call it.

export const FRAME_STATUSES = [
  'Starting',
  'Online',
  'Degraded',
  'Error',
  'Stopped',
  'Suspended',
] as const;
export type FrameStatus = (typeof FRAME_STATUSES)[number];

export const REPLICA_STATES = [
  'pulling',
  'starting',
  'healthy',
  'unhealthy',
  'crashed',
  'oom',
  'stopped',
] as const;
export type ReplicaState = (typeof REPLICA_STATES)[number];

export const ERROR_REASONS = [
  'crash',
  'oom',
  'health_check_failed',
  'image_pull_failed',
  'port_in_use',
  'build_failed',
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];
export type StatusReason = ErrorReason | 'backoff_tripped' | 'billing_past_due' | 'stopping' | null;
/** What the agent may say of a replica: an error reason, or start_timeout (no health check answered in time). */
export const REPLICA_REASONS = [...ERROR_REASONS, 'start_timeout'] as const;
export type ReplicaReason = (typeof REPLICA_REASONS)[number];

export interface ObservedReplica {
  state: ReplicaState;
  /** Why it failed, as the agent said (a failed image pull is a crash with image_pull_failed). */
  reason?: string | null;
}

export interface FrameFacts {
  billingPastDue: boolean;
  desiredState: 'running' | 'stopped';
  backoffTripped: boolean;
  deployInProgress: boolean;
  replicaCount: number;
  /** Replicas of the current deployment, by index; undefined where one has not reported yet. */
  replicas: Array<ObservedReplica | undefined>;
  /** The latest deployment failed to build: with nothing serving, that is the frame's error. */
  buildFailed: boolean;
}

const RUNNING: ReadonlySet<ReplicaState> = new Set(['pulling', 'starting', 'healthy', 'unhealthy']);

const isErrorReason = (x: unknown): x is ErrorReason =>
  (ERROR_REASONS as readonly unknown[]).includes(x);

function failureReason(r: ObservedReplica): ErrorReason | undefined {
  // A replica that is up (or on its way) has no failure, whatever an older report said.
  if (r.state === 'healthy' || r.state === 'pulling' || r.state === 'starting') return undefined;
  if (isErrorReason(r.reason)) return r.reason;
  if (r.reason === 'start_timeout') return 'health_check_failed';
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
    return {
      status: 'Stopped',
      reason: f.replicas.some((r) => r && RUNNING.has(r.state)) ? 'stopping' : null,
    };
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
  const [failure] = failures;
  if (healthy > 0) return { status: 'Degraded', reason: failure ?? null };
  if (failure) return { status: 'Error', reason: failure };
  // No release serves and the new one did not build (a first deploy): nothing will come up.
  // During a rollout the agent reports the serving replicas, so this is not reached.
  if (f.buildFailed) return { status: 'Error', reason: 'build_failed' };
  // Nothing healthy and nothing failed: replicas have not come up (or were stopped) yet.
  return { status: 'Starting', reason: null };
}
