// What a pod is, as a replica event (src/runner/runtimes/kubernetes/pod-status.ts): a table of
// what the cluster says and what the agent reports, keys that make each crash news once, and a
// property: whatever the pod and its Events, one of the protocol's types comes out.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type {
  CoreV1Event,
  V1ContainerState,
  V1ContainerStatus,
  V1Pod,
  V1PodCondition,
} from '@kubernetes/client-node';
import { REPLICA_STATES } from '../../../src/frames/frame-status.ts';
import { observePod } from '../../../src/runner/runtimes/kubernetes/pod-status.ts';

const T0 = Date.parse('2026-11-29T10:00:00Z');
const t = (s: number) => new Date(T0 + s * 1000);
const START_TIMEOUT_MS = 60_000;
const UID = 'pod-uid-1';

interface PodShape {
  state?: V1ContainerState;
  lastState?: V1ContainerState;
  ready?: boolean;
  restarts?: number;
  phase?: string;
  reason?: string;
  message?: string;
  conditions?: V1PodCondition[];
  deleting?: boolean;
  noContainer?: boolean;
}

function pod(s: PodShape): V1Pod {
  const container: V1ContainerStatus = {
    name: 'app',
    image: 'img:1',
    imageID: '',
    ready: s.ready ?? false,
    restartCount: s.restarts ?? 0,
    state: s.state ?? { waiting: { reason: 'ContainerCreating' } },
    ...(s.lastState ? { lastState: s.lastState } : {}),
  };
  return {
    metadata: {
      name: 'fp-frm-1-abc-xyz',
      uid: UID,
      creationTimestamp: t(0),
      labels: { 'frameplane.dev/deployment': 'dep_1' },
      ...(s.deleting ? { deletionTimestamp: t(30) } : {}),
    },
    status: {
      phase: s.phase ?? 'Pending',
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.message ? { message: s.message } : {}),
      conditions: s.conditions ?? [],
      ...(s.noContainer ? {} : { containerStatuses: [container] }),
    },
  };
}

const event = (reason: string, at: number, extra: Partial<CoreV1Event> = {}): CoreV1Event => ({
  metadata: {},
  involvedObject: { kind: 'Pod', uid: UID },
  reason,
  type:
    reason === 'Failed' || reason === 'Unhealthy' || reason.startsWith('Failed')
      ? 'Warning'
      : 'Normal',
  lastTimestamp: t(at),
  ...extra,
});

const ended = (reason: string, exitCode: number, extra = {}) => ({
  terminated: { reason, exitCode, containerID: 'docker://c1', finishedAt: t(20), ...extra },
});
const running = (at: number) => ({ running: { startedAt: t(at) } });
const readyCondition = (status: string, at: number): V1PodCondition => ({
  type: 'Ready',
  status,
  lastTransitionTime: t(at),
});

describe('a pod as a replica event', () => {
  it.each<[string, PodShape, CoreV1Event[], number, string, Record<string, unknown> | undefined]>([
    [
      'being deleted',
      { deleting: true, state: running(5), ready: true },
      [],
      40,
      'stopped',
      undefined,
    ],
    [
      'an image it cannot pull',
      { state: { waiting: { reason: 'ErrImagePull', message: 'pull access denied' } } },
      [],
      10,
      'crashed',
      { reason: 'image_pull_failed', message: 'pull access denied' },
    ],
    [
      'an image pull backing off (the Event says why)',
      { state: { waiting: { reason: 'ImagePullBackOff' } } },
      [
        event('Failed', 8, { message: 'Failed to pull image "img:1": not found' }),
        event('Failed', 9, { message: 'Error: ImagePullBackOff' }),
      ],
      10,
      'crashed',
      { reason: 'image_pull_failed', message: 'Failed to pull image "img:1": not found' },
    ],
    [
      'a container killed for memory',
      { state: ended('OOMKilled', 137), restarts: 0 },
      [],
      21,
      'oom',
      { exit_code: 137, signal: 'SIGKILL', message: 'exited (signal SIGKILL, out of memory)' },
    ],
    [
      'a container that exited with what it said',
      { state: ended('Error', 1, { message: 'boom\n' }) },
      [],
      21,
      'crashed',
      { exit_code: 1, signal: null, message: 'exited (exit code 1): boom' },
    ],
    [
      'a container stopped by a signal the runtime names',
      { state: ended('Error', 0, { signal: 15 }) },
      [],
      21,
      'crashed',
      { exit_code: 0, signal: 'SIGTERM', message: 'exited (signal SIGTERM)' },
    ],
    [
      'a crash loop',
      {
        state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: ended('Error', 2),
        restarts: 3,
      },
      [event('BackOff', 25)],
      30,
      'crashed',
      { exit_code: 2, signal: null, message: 'exited (exit code 2)' },
    ],
    [
      'a crash loop of running out of memory',
      { state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: ended('OOMKilled', 137) },
      [],
      30,
      'oom',
      { exit_code: 137 },
    ],
    [
      'a crash loop with no last state',
      { state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } } },
      [],
      30,
      'crashed',
      { exit_code: null, message: 'back-off 10s' },
    ],
    [
      'an evicted pod',
      {
        phase: 'Failed',
        reason: 'Evicted',
        message: 'The node was low on resource: memory.',
        noContainer: true,
      },
      [],
      30,
      'crashed',
      { exit_code: null, message: 'Evicted: The node was low on resource: memory.' },
    ],
    [
      'a container the kubelet cannot make',
      {
        state: {
          waiting: { reason: 'CreateContainerConfigError', message: 'secret "x" not found' },
        },
      },
      [],
      5,
      'crashed',
      { exit_code: null, message: 'CreateContainerConfigError: secret "x" not found' },
    ],
    [
      'a Ready container',
      { state: running(5), ready: true, phase: 'Running' },
      [],
      20,
      'healthy',
      undefined,
    ],
    [
      'a container not Ready yet',
      { state: running(5), conditions: [readyCondition('False', 0)] },
      [],
      20,
      'starting',
      undefined,
    ],
    [
      'a container back after a crash',
      {
        state: running(25),
        lastState: ended('Error', 1),
        restarts: 1,
        conditions: [readyCondition('False', 20)],
      },
      [],
      30,
      'starting',
      { reason: 'crash' },
    ],
    [
      'a container restarted in the second it fell (not Ready since it started)',
      {
        state: running(25),
        lastState: ended('Error', 1),
        restarts: 1,
        conditions: [readyCondition('False', 25)],
      },
      [],
      30,
      'starting',
      { reason: 'crash' },
    ],
    [
      'a container back after running out of memory',
      { state: running(25), lastState: ended('OOMKilled', 137), restarts: 1 },
      [],
      30,
      'starting',
      { reason: 'oom' },
    ],
    [
      'a container never Ready in time',
      { state: running(5), conditions: [readyCondition('False', 0)] },
      [
        event('Unhealthy', 60, {
          message: 'Readiness probe failed: HTTP probe failed with statuscode: 404',
        }),
      ],
      70,
      'unhealthy',
      {
        reason: 'start_timeout',
        message:
          'not ready 65 s after it started ' +
          '(Readiness probe failed: HTTP probe failed with statuscode: 404)',
      },
    ],
    [
      'a container that was Ready and answers 503 now',
      { state: running(5), conditions: [readyCondition('False', 50)] },
      [
        event('Unhealthy', 49, {
          message: 'Readiness probe failed: HTTP probe failed with statuscode: 503',
        }),
      ],
      51,
      'unhealthy',
      { reason: 'http_503' },
    ],
    [
      'a container that was Ready and refuses connections now',
      { state: running(5), conditions: [readyCondition('False', 50)] },
      [
        event('Unhealthy', 49, {
          message: 'Readiness probe failed: dial tcp 127.0.0.1:3000: connect: connection refused',
        }),
      ],
      51,
      'unhealthy',
      { reason: 'refused' },
    ],
    [
      'a container that was Ready, with no Event kept',
      { state: running(5), conditions: [readyCondition('False', 50)] },
      [],
      51,
      'unhealthy',
      { reason: 'readiness' },
    ],
    [
      'an image being pulled',
      {},
      [event('Scheduled', 0), event('Pulling', 1)],
      5,
      'pulling',
      undefined,
    ],
    [
      'an image pulled, the container on its way',
      {},
      [event('Pulling', 1), event('Pulled', 1), event('Created', 1)],
      5,
      'starting',
      undefined,
    ],
    [
      'another pod pulling',
      {},
      [event('Pulling', 1, { involvedObject: { uid: 'other' } })],
      5,
      'starting',
      undefined,
    ],
    ['a pod not scheduled yet', { noContainer: true }, [], 5, 'starting', undefined],
    [
      'a pod no node takes, past the start window',
      {
        noContainer: true,
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            message: '0/1 nodes are available: 1 Insufficient memory.',
          },
        ],
      },
      [],
      61,
      'unhealthy',
      {
        reason: 'start_timeout',
        message:
          'not started 61 s after it was made: 0/1 nodes are available: 1 Insufficient memory.',
      },
    ],
    [
      'a pod whose volume does not mount, past the start window',
      {},
      [event('FailedMount', 30, { message: 'Unable to attach or mount volumes' })],
      90,
      'unhealthy',
      {
        reason: 'start_timeout',
        message: 'not started 90 s after it was made: Unable to attach or mount volumes',
      },
    ],
    [
      'a pod stuck with nothing said, past the start window',
      {},
      [],
      90,
      'unhealthy',
      { reason: 'start_timeout', message: 'not started 90 s after it was made: ContainerCreating' },
    ],
  ])('%s', (_what, shape, events, nowS, type, detail) => {
    const o = observePod(pod(shape), events, {
      now: T0 + nowS * 1000,
      startTimeoutMs: START_TIMEOUT_MS,
    });
    expect(o.type).toBe(type);
    expect(o.deploymentId).toBe('dep_1');
    if (detail) expect(o.detail).toMatchObject(detail);
    else expect(o.detail).toBeUndefined();
  });

  const observe = (shape: PodShape, events: CoreV1Event[] = [], nowS = 30) =>
    observePod(pod(shape), events, { now: T0 + nowS * 1000, startTimeoutMs: START_TIMEOUT_MS });

  it('reports one crash once, whether it shows as ended or as a crash loop', () => {
    const crash = ended('Error', 1);
    const asEnded = observe({ state: crash, restarts: 0 });
    const asLoop = observe({
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: crash,
      restarts: 1,
    });
    expect(asLoop.key).toBe(asEnded.key);
    const next = ended('Error', 1, { containerID: 'docker://c2', finishedAt: t(40) });
    expect(observe({ state: next, restarts: 1 }).key).not.toBe(asEnded.key);
  });

  it('makes each failed pull news, for the back-off to count', () => {
    const pull = (count: number) =>
      event('Failed', 1, { count, message: 'Failed to pull image "img:1": not found' });
    const waiting = (count: number) =>
      event('Failed', 2, { count, message: 'Error: ImagePullBackOff' });
    const shape = { state: { waiting: { reason: 'ErrImagePull' } } };
    const first = observe(shape, [pull(1)]);
    const backOff = { state: { waiting: { reason: 'ImagePullBackOff' } } };
    // Waiting to pull again is not another failure, however often the kubelet says so.
    expect(observe(backOff, [pull(1), waiting(1)]).key).toBe(first.key);
    expect(observe(backOff, [pull(1), waiting(7)]).key).toBe(first.key);
    expect(observe(shape, [pull(2), waiting(7)]).key).not.toBe(first.key);
    // With no Event of a pull kept, the message is the last the kubelet gave.
    expect(observe(backOff, [waiting(3)]).detail?.message).toBe('Error: ImagePullBackOff');
  });

  it('says healthy, unhealthy and healthy again as three pieces of news', () => {
    const up = observe({ state: running(5), ready: true });
    const down = observe({ state: running(5), conditions: [readyCondition('False', 20)] });
    expect(new Set([up.key, down.key]).size).toBe(2);
    expect(observe({ state: running(5), ready: true }).key).toBe(up.key);
  });

  it('reads times as the API writes them too (strings), and the newest of one second last', () => {
    const p = pod({});
    const asText = { ...p, metadata: { ...p.metadata, creationTimestamp: '2026-11-29T10:00:00Z' } };
    const events = [
      { ...event('Pulled', 0), lastTimestamp: undefined, eventTime: '2026-11-29T10:00:02Z' },
      event('Pulling', 2),
    ] as CoreV1Event[];
    const o = observePod(asText as unknown as V1Pod, events, {
      now: T0 + 5000,
      startTimeoutMs: START_TIMEOUT_MS,
    });
    expect(o.type).toBe('pulling');
  });

  it('cuts a long message to its end', () => {
    const o = observe({ state: ended('Error', 1, { message: `${'x'.repeat(5000)}the end` }) });
    expect(String(o.detail?.message).length).toBe(2000);
    expect(String(o.detail?.message).endsWith('the end')).toBe(true);
  });
});

// Whatever the cluster says: partial objects, unknown reasons, times missing or unreadable.
const text = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    'ErrImagePull',
    'ImagePullBackOff',
    'CrashLoopBackOff',
    'OOMKilled',
    'Error',
    'Completed',
    'ContainerCreating',
    'CreateContainerConfigError',
    'Pulling',
    'Pulled',
    'Failed',
    'Unhealthy',
    'Ready',
    'PodScheduled',
    'True',
    'False',
    'Running',
    'Pending',
    'app',
  ),
);
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });
const time = opt(fc.oneof(fc.date({ noInvalidDate: false }), fc.string({ maxLength: 25 })));
const terminated = fc.record(
  {
    exitCode: fc.integer(),
    reason: text,
    message: fc.string({ maxLength: 3000 }),
    signal: fc.integer(),
    containerID: text,
    finishedAt: time,
  },
  { requiredKeys: [] },
);
const state = fc.record(
  {
    waiting: fc.record({ reason: text, message: text }, { requiredKeys: [] }),
    running: fc.record({ startedAt: time }, { requiredKeys: [] }),
    terminated,
  },
  { requiredKeys: [] },
);
const anyPod = fc.record(
  {
    metadata: fc.record(
      {
        uid: text,
        name: text,
        labels: fc.dictionary(text, text),
        creationTimestamp: time,
        deletionTimestamp: time,
      },
      { requiredKeys: [] },
    ),
    status: fc.record(
      {
        phase: text,
        reason: text,
        message: text,
        conditions: fc.array(
          fc.record(
            { type: text, status: text, lastTransitionTime: time, message: text },
            { requiredKeys: ['type', 'status'] },
          ),
          { maxLength: 4 },
        ),
        containerStatuses: fc.array(
          fc.record(
            {
              name: text,
              ready: fc.boolean(),
              restartCount: fc.integer(),
              state,
              lastState: state,
            },
            { requiredKeys: ['name', 'ready', 'restartCount'] },
          ),
          { maxLength: 2 },
        ),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: [] },
);
const anyEvent = fc.record(
  {
    reason: text,
    message: text,
    type: text,
    count: fc.integer(),
    lastTimestamp: time,
    eventTime: time,
    firstTimestamp: time,
    involvedObject: fc.record({ uid: text, name: text }, { requiredKeys: [] }),
  },
  { requiredKeys: ['involvedObject'] },
);

describe('whatever the pod', () => {
  it('one of the protocol types comes out, with a key and a detail the sync takes', () => {
    fc.assert(
      fc.property(
        anyPod,
        fc.array(anyEvent, { maxLength: 6 }),
        fc.integer(),
        fc.integer({ min: 0, max: 600_000 }),
        (p, events, now, startTimeoutMs) => {
          const o = observePod(p as V1Pod, events as CoreV1Event[], { now, startTimeoutMs });
          expect(REPLICA_STATES).toContain(o.type);
          expect(typeof o.key).toBe('string');
          expect(o.key.endsWith(`/${o.type}`)).toBe(true);
          for (const v of Object.values(o.detail ?? {}))
            expect(v === null || typeof v === 'string' || typeof v === 'number').toBe(true);
          if (typeof o.detail?.message === 'string')
            expect(o.detail.message.length).toBeLessThanOrEqual(2000);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
