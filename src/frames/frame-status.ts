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
  'clone_failed',
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
  /** Why it failed, as the agent said (a failed clone is a crash with clone_failed). */
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
/** On its way up, within its start window: the agent reports `unhealthy` once that has passed. */
const COMING_UP: ReadonlySet<ReplicaState> = new Set(['pulling', 'starting']);

const isErrorReason = (x: unknown): x is ErrorReason =>
  (ERROR_REASONS as readonly unknown[]).includes(x);

function failureReason(r: ObservedReplica): ErrorReason | undefined {
  if (r.state === 'healthy') return undefined;
  if (isErrorReason(r.reason)) return r.reason;
  if (r.reason === 'start_timeout') return 'health_check_failed';
  // Coming up with no reason: new (a scale-up) or fetched again. The agent names the failure
  // it restarts a replica after (frame-runner.ts), so a crash loop does not look up half the time.
  if (COMING_UP.has(r.state)) return undefined;
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
  if (f.deployInProgress) return { status: 'Starting', reason: null };
  // Replicas beyond replica_count (left over from a scale-down) do not count.
  const wanted = f.replicas.slice(0, f.replicaCount);
  const healthy = wanted.filter((r) => r?.state === 'healthy').length;
  if (healthy >= f.replicaCount) return { status: 'Online', reason: null };
  const failure = wanted.map((r) => r && failureReason(r)).find((x) => x !== undefined);
  if (healthy > 0) {
    if (failure) return { status: 'Degraded', reason: failure };
    // The others are coming up, or not reported yet (a scale-up the agent has not acted on):
    // nothing has failed and the frame serves as before, so it stays Online (issue 38).
    const rest = wanted.filter((r) => r?.state !== 'healthy');
    return rest.every((r) => !r || COMING_UP.has(r.state))
      ? { status: 'Online', reason: null }
      : { status: 'Degraded', reason: null };
  }
  if (wanted.some((r) => r && COMING_UP.has(r.state))) return { status: 'Starting', reason: null };
  if (failure) return { status: 'Error', reason: failure };
  // No release serves and the new one did not build (a first deploy): nothing will come up.
  // During a rollout the agent reports the serving replicas, so this is not reached.
  if (f.buildFailed) return { status: 'Error', reason: 'build_failed' };
  // Nothing healthy and nothing failed: replicas have not come up (or were stopped) yet.
  return { status: 'Starting', reason: null };
}
