// What a frame's pod is, as the agent reports a replica (protocol.ts), read from the cluster's
// own account of it: the pod's status (phase, conditions, its container's state, last state and
// restarts) and the pod's recent Events, never its logs (issue 40). Pure and total: whatever
// the cluster says, one of the protocol's event types comes out, with the detail the other
// runtimes give (frame-runner.ts, swarm.ts): exit code, signal and message of a crash, the
// reason a replica restarts after, `start_timeout` for one never Ready in time.
//
// Each observation has a key that changes exactly when it is news: the supervisor reports an
// observation whose key differs from the last it reported for that pod. One crash keeps its
// key whether the pod shows it as terminated or as CrashLoopBackOff (its container and end),
// so it is reported once; the next crash is another key, so the server's back-off counts each.
import { constants } from 'node:os';
import type {
  CoreV1Event,
  V1ContainerStateTerminated,
  V1ContainerStatus,
  V1Pod,
} from '@kubernetes/client-node';
import type { ReplicaEventType } from '../../protocol.ts';
import { CONTAINER, LABELS } from './names.ts';

export interface PodObservation {
  type: ReplicaEventType;
  /** The release the pod runs (its label); empty if it has none. */
  deploymentId: string;
  detail?: Record<string, string | number | null>;
  key: string;
}

export interface ObserveOptions {
  now: number;
  /** A pod not Ready this long after its container started is `unhealthy` (start_timeout). */
  startTimeoutMs: number;
}

/** The kubelet cannot get the image: it retries with a back-off, each failure an Event. */
const IMAGE_PULL = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'RegistryUnavailable',
]);
/** The kubelet cannot make or start the container from its spec: it will not come up as is. */
const CANNOT_START = new Set([
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
  'PostStartHookError',
]);
/** The Events of the image, in the order the kubelet emits them for one pull. */
const IMAGE_EVENTS = new Set(['Pulling', 'Pulled', 'Failed', 'BackOff', 'ErrImageNeverPull']);
const MAX_MESSAGE = 2000;

/** Milliseconds of a time the client gives as a Date (or the API as a string); NaN if none. */
const ms = (t: unknown): number =>
  t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : Number.NaN;
const eventTime = (e: CoreV1Event) =>
  [e.lastTimestamp, e.eventTime, e.firstTimestamp, e.metadata?.creationTimestamp]
    .map(ms)
    .find((t) => !Number.isNaN(t)) ?? 0;
const cut = (s: string) => (s.length > MAX_MESSAGE ? `…${s.slice(-MAX_MESSAGE + 1)}` : s);
const signalName = (n: number) =>
  Object.entries(constants.signals).find(([, v]) => v === n)?.[0] ?? null;

/** The pod's own Events, oldest first (events of one second keep the order given). */
function ownEvents(pod: V1Pod, events: CoreV1Event[]): CoreV1Event[] {
  const uid = pod.metadata?.uid;
  const name = pod.metadata?.name;
  return events
    .filter((e) => (uid && e.involvedObject?.uid ? e.involvedObject.uid === uid : true))
    .filter((e) => (name && e.involvedObject?.name ? e.involvedObject.name === name : true))
    .map((e, i) => ({ e, i, t: eventTime(e) }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((x) => x.e);
}

/** An ended container as the other runtimes report an exit. */
function ended(t: V1ContainerStateTerminated): {
  type: ReplicaEventType;
  detail: PodObservation['detail'];
} {
  const oom = t.reason === 'OOMKilled';
  const code = typeof t.exitCode === 'number' ? t.exitCode : null;
  const signal = t.signal
    ? signalName(t.signal)
    : code !== null && code > 128
      ? signalName(code - 128)
      : null;
  const how = signal ? `signal ${signal}` : code === null ? 'unknown status' : `exit code ${code}`;
  const said = t.message?.trim();
  const message = `exited (${how}${oom ? ', out of memory' : ''})${said ? `: ${said}` : ''}`;
  return {
    type: oom ? 'oom' : 'crashed',
    detail: { exit_code: code, signal, message: cut(message) },
  };
}

/** `http_503`, `refused` or `readiness`, from the kubelet's "Readiness probe failed" Event. */
function readinessReason(message: string | undefined): string {
  const status = /statuscode: (\d{3})/.exec(message ?? '');
  if (status) return `http_${status[1]}`;
  return /connection refused/.test(message ?? '') ? 'refused' : 'readiness';
}

export function observePod(pod: V1Pod, events: CoreV1Event[], o: ObserveOptions): PodObservation {
  const id = pod.metadata?.uid ?? pod.metadata?.name ?? '';
  const deploymentId = pod.metadata?.labels?.[LABELS.deployment] ?? '';
  const at = (type: ReplicaEventType, what: string, detail?: PodObservation['detail']) => ({
    type,
    deploymentId,
    key: `${id}/${what}/${type}`,
    ...(detail ? { detail } : {}),
  });
  const own = ownEvents(pod, events);
  const last = (reasons: Set<string>) => own.filter((e) => reasons.has(e.reason ?? '')).at(-1);
  const statuses: V1ContainerStatus[] = pod.status?.containerStatuses ?? [];
  const c = statuses.find((s) => s.name === CONTAINER) ?? statuses[0];
  const state = c?.state ?? {};
  const restarts = c?.restartCount ?? 0;

  // Being deleted (a scale-down, a rollout, a stop): no longer this slot's replica.
  if (pod.metadata?.deletionTimestamp) return at('stopped', 'deleting');
  const waiting = state.waiting?.reason ?? '';
  if (IMAGE_PULL.has(waiting)) {
    const failed = own.filter((e) => e.reason === 'Failed');
    // The kubelet also says "Error: ImagePullBackOff" (reason Failed) each time it waits; only
    // a pull that failed counts, one more on its Event each time: a crash each, for the back-off.
    const pull = failed.filter((e) => e.message?.startsWith('Failed to pull image')).at(-1);
    const message = state.waiting?.message || pull?.message || failed.at(-1)?.message || waiting;
    return at('crashed', `pull-${restarts}-${pull?.count ?? 1}`, {
      reason: 'image_pull_failed',
      message: cut(message),
    });
  }
  const end =
    state.terminated ?? (waiting === 'CrashLoopBackOff' ? c?.lastState?.terminated : undefined);
  if (end) {
    const { type, detail } = ended(end);
    return at(type, `end-${end.containerID ?? restarts}-${ms(end.finishedAt)}`, detail);
  }
  if (pod.status?.phase === 'Failed' || waiting === 'CrashLoopBackOff') {
    const why = [pod.status?.reason, pod.status?.message ?? state.waiting?.message];
    const message = why.filter(Boolean).join(': ') || 'failed';
    return at('crashed', `failed-${restarts}`, { exit_code: null, message: cut(message) });
  }
  if (CANNOT_START.has(waiting)) {
    const message = `${waiting}: ${state.waiting?.message ?? ''}`;
    return at('crashed', `cannot-${restarts}-${waiting}`, {
      exit_code: null,
      message: cut(message),
    });
  }
  const running = state.running;
  if (running) {
    const started = ms(running.startedAt);
    const what = `run-${restarts}-${started}`;
    if (c?.ready === true) return at('healthy', what);
    const ready = pod.status?.conditions?.find((x) => x.type === 'Ready');
    const unhealthy = last(new Set(['Unhealthy']))?.message;
    // Not Ready since a moment after it started: it was, and failed its checks since.
    if (ready?.status === 'False' && ms(ready.lastTransitionTime) > started)
      return at('unhealthy', what, { reason: readinessReason(unhealthy) });
    if (o.now - started > o.startTimeoutMs) {
      const secs = Math.round((o.now - started) / 1000);
      const message = `not ready ${secs} s after it started${unhealthy ? ` (${unhealthy})` : ''}`;
      return at('unhealthy', what, { reason: 'start_timeout', message: cut(message) });
    }
    // A restart after a failure says so: the frame is Degraded while it comes up, not Online.
    const before = c?.lastState?.terminated;
    if (before)
      return at('starting', what, { reason: before.reason === 'OOMKilled' ? 'oom' : 'crash' });
    return at('starting', what);
  }
  // Not started yet: unscheduled, its volumes or image on their way.
  if (last(IMAGE_EVENTS)?.reason === 'Pulling') return at('pulling', `pull-${restarts}`);
  const since = ms(pod.metadata?.creationTimestamp);
  if (o.now - since > o.startTimeoutMs) {
    const unscheduled = pod.status?.conditions?.find(
      (x) => x.type === 'PodScheduled' && x.status === 'False',
    );
    const warning = own.filter((e) => e.type === 'Warning').at(-1);
    const why =
      unscheduled?.message || warning?.message || waiting || pod.status?.phase || 'pending';
    const message = `not started ${Math.round((o.now - since) / 1000)} s after it was made: ${why}`;
    return at('unhealthy', `pending-${restarts}`, {
      reason: 'start_timeout',
      message: cut(message),
    });
  }
  return at('starting', `pending-${restarts}`);
}
