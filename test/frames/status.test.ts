// Frame status, pure (no database): a table test of frameStatus() over every row of the spec's
// transition table (section 3) and of CONTRACT 5's status table, a property test that drives
// the real pure functions (factsOf + frameStatus + afterEvent) and a small reference model
// written here through the same random event sequences, and property tests of backoff.ts.
// The reference model deliberately imports nothing from src/frames/frame-status.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  FRAME_STATUSES,
  frameStatus,
  type FrameFacts,
  type ObservedReplica,
  type ReplicaState,
} from '../../src/frames/frame-status.ts';
import {
  afterEvent,
  CRASH_THRESHOLD,
  PULL_TIMEOUT_SECONDS,
  pullDeadline,
  pullStuck,
} from '../../src/frames/backoff.ts';
import { factsOf } from '../../src/frames/frame-view.ts';
import type { FrameWithFacts } from '../../src/frames/frames-dal.ts';
import { at } from '../helpers/checked.ts';

const r = (state: ReplicaState, reason: string | null = null): ObservedReplica => ({
  state,
  ...(reason ? { reason } : {}),
});
const running = (over: Partial<FrameFacts> = {}): FrameFacts => ({
  billingPastDue: false,
  desiredState: 'running',
  backoffTripped: false,
  deployInProgress: false,
  replicaCount: 2,
  replicas: [],
  buildFailed: false,
  ...over,
});
// What an agent may say of a replica (detail.reason), written out here rather than imported.
const REASONS = [
  'crash',
  'oom',
  'health_check_failed',
  'image_pull_failed',
  'clone_failed',
  'port_in_use',
  'build_failed',
  'start_timeout',
];
const ERRORS = [
  'crash',
  'oom',
  'health_check_failed',
  'image_pull_failed',
  'clone_failed',
  'port_in_use',
  'build_failed',
];

// ---------------------------------------------------------------------------------------------
// Table: each row is one line of the spec's / CONTRACT's tables, with the facts that reach it.
// ---------------------------------------------------------------------------------------------
const TABLE: Array<[string, FrameFacts, { status: string; reason: string | null }]> = [
  // Suspended wins over everything (billing past due, from any state).
  [
    'past due, running and healthy',
    running({ billingPastDue: true, replicas: [r('healthy'), r('healthy')] }),
    { status: 'Suspended', reason: 'billing_past_due' },
  ],
  [
    'past due, stopped by hand',
    running({ billingPastDue: true, desiredState: 'stopped' }),
    { status: 'Suspended', reason: 'billing_past_due' },
  ],
  [
    'past due, back-off tripped',
    running({ billingPastDue: true, desiredState: 'stopped', backoffTripped: true }),
    { status: 'Suspended', reason: 'billing_past_due' },
  ],
  [
    'past due, deploy in progress',
    running({ billingPastDue: true, deployInProgress: true }),
    { status: 'Suspended', reason: 'billing_past_due' },
  ],
  [
    'past due, crashing',
    running({ billingPastDue: true, replicas: [r('crashed'), r('oom')] }),
    { status: 'Suspended', reason: 'billing_past_due' },
  ],
  [
    'past due, nothing reported',
    running({ billingPastDue: true }),
    { status: 'Suspended', reason: 'billing_past_due' },
  ],

  // Desired stopped: Stopped, with the reason saying why or what is still happening.
  [
    'stopped by back-off, nothing running',
    running({
      desiredState: 'stopped',
      backoffTripped: true,
      replicas: [r('crashed'), r('crashed')],
    }),
    { status: 'Stopped', reason: 'backoff_tripped' },
  ],
  [
    'stopped by back-off, a replica still up',
    running({ desiredState: 'stopped', backoffTripped: true, replicas: [r('healthy')] }),
    { status: 'Stopped', reason: 'backoff_tripped' },
  ],
  [
    'stopped by hand, replicas winding down',
    running({ desiredState: 'stopped', replicas: [r('healthy'), r('stopped')] }),
    { status: 'Stopped', reason: 'stopping' },
  ],
  [
    'stopped by hand, a replica still pulling',
    running({ desiredState: 'stopped', replicas: [r('pulling')] }),
    { status: 'Stopped', reason: 'stopping' },
  ],
  [
    'stopped by hand, a replica still starting',
    running({ desiredState: 'stopped', replicas: [r('starting')] }),
    { status: 'Stopped', reason: 'stopping' },
  ],
  [
    'stopped by hand, a replica still unhealthy',
    running({ desiredState: 'stopped', replicas: [r('unhealthy')] }),
    { status: 'Stopped', reason: 'stopping' },
  ],
  [
    'stopped by hand, all replicas stopped',
    running({ desiredState: 'stopped', replicas: [r('stopped'), r('stopped')] }),
    { status: 'Stopped', reason: null },
  ],
  [
    'stopped by hand, replicas crashed',
    running({ desiredState: 'stopped', replicas: [r('crashed'), r('oom')] }),
    { status: 'Stopped', reason: null },
  ],
  [
    'stopped by hand, nothing reported',
    running({ desiredState: 'stopped' }),
    { status: 'Stopped', reason: null },
  ],
  [
    'stopped by hand while a deploy is in progress',
    running({ desiredState: 'stopped', deployInProgress: true }),
    { status: 'Stopped', reason: null },
  ],

  // Starting: a deploy or re-roll in progress, or nothing healthy and replicas on their way.
  [
    'deploy in progress, all healthy',
    running({ deployInProgress: true, replicas: [r('healthy'), r('healthy')] }),
    { status: 'Starting', reason: null },
  ],
  [
    'deploy in progress, nothing reported',
    running({ deployInProgress: true }),
    { status: 'Starting', reason: null },
  ],
  [
    'nothing healthy, a replica starting',
    running({ replicas: [r('starting')] }),
    { status: 'Starting', reason: null },
  ],
  [
    'pulling and crashed',
    running({ replicas: [r('pulling'), r('crashed')] }),
    { status: 'Starting', reason: null },
  ],
  ['no reports yet', running(), { status: 'Starting', reason: null }],
  [
    'replicas reported stopped while desired running',
    running({ replicas: [r('stopped'), r('stopped')] }),
    { status: 'Starting', reason: null },
  ],

  // Online: all replica_count replicas healthy.
  [
    'all healthy (1)',
    running({ replicaCount: 1, replicas: [r('healthy')] }),
    { status: 'Online', reason: null },
  ],
  [
    'all healthy (3)',
    running({ replicaCount: 3, replicas: [r('healthy'), r('healthy'), r('healthy')] }),
    { status: 'Online', reason: null },
  ],

  // Degraded: some but not all healthy.
  [
    'one healthy, one unhealthy',
    running({ replicas: [r('healthy'), r('unhealthy')] }),
    { status: 'Degraded', reason: 'health_check_failed' },
  ],
  [
    'one healthy, one crashed',
    running({ replicas: [r('crashed'), r('healthy')] }),
    { status: 'Degraded', reason: 'crash' },
  ],
  [
    'one healthy, one oom',
    running({ replicas: [r('healthy'), r('oom')] }),
    { status: 'Degraded', reason: 'oom' },
  ],
  [
    'one healthy, one stopped',
    running({ replicas: [r('healthy'), r('stopped')] }),
    { status: 'Degraded', reason: null },
  ],

  // Scale-up (issue 38): the added replicas come up while the others serve; Online until one
  // of them fails or stays unhealthy past its start window (the agent says start_timeout).
  [
    'scale-up: the added replica not reported yet',
    running({ replicaCount: 2, replicas: [r('healthy')] }),
    { status: 'Online', reason: null },
  ],
  [
    'scale-up: the added replicas pulling and starting',
    running({ replicaCount: 3, replicas: [r('healthy'), r('pulling'), r('starting')] }),
    { status: 'Online', reason: null },
  ],
  [
    'scale-up: the added replica starting before the first',
    running({ replicas: [r('starting'), r('healthy')] }),
    { status: 'Online', reason: null },
  ],
  [
    'scale-up: the added replica never answered in its start window',
    running({ replicas: [r('healthy'), r('unhealthy', 'start_timeout')] }),
    { status: 'Degraded', reason: 'health_check_failed' },
  ],
  [
    'scale-up: the added replica crashed, others still coming up',
    running({ replicaCount: 3, replicas: [r('healthy'), r('starting'), r('crashed')] }),
    { status: 'Degraded', reason: 'crash' },
  ],
  [
    'scale-up with nothing healthy yet: Starting',
    running({ replicaCount: 3, replicas: [r('starting'), r('pulling')] }),
    { status: 'Starting', reason: null },
  ],

  // Scale-down: the replicas beyond replica_count do not count, whatever they are doing.
  [
    'scale-down: the removed replica still healthy',
    running({ replicaCount: 1, replicas: [r('healthy'), r('healthy')] }),
    { status: 'Online', reason: null },
  ],
  [
    'scale-down: the removed replica stopping',
    running({ replicaCount: 1, replicas: [r('healthy'), r('stopped')] }),
    { status: 'Online', reason: null },
  ],
  [
    'scale-down: the kept replica still starting',
    running({ replicaCount: 1, replicas: [r('starting'), r('healthy')] }),
    { status: 'Starting', reason: null },
  ],

  // A replica that fails after it started: Degraded while the others serve, also while the
  // agent restarts it (it says what the replica failed of), until it is healthy again.
  [
    'failed after start: unhealthy after being healthy',
    running({ replicas: [r('healthy'), r('unhealthy', 'http_500')] }),
    { status: 'Degraded', reason: 'health_check_failed' },
  ],
  [
    'failed after start: restarting after a crash',
    running({ replicas: [r('healthy'), r('starting', 'crash')] }),
    { status: 'Degraded', reason: 'crash' },
  ],
  [
    'failed after start: restarting after running out of memory',
    running({ replicas: [r('starting', 'oom'), r('healthy')] }),
    { status: 'Degraded', reason: 'oom' },
  ],
  [
    'failed after start: restarting, nothing else healthy',
    running({ replicaCount: 1, replicas: [r('starting', 'crash')] }),
    { status: 'Starting', reason: null },
  ],
  [
    'failed after start: healthy again after its restart',
    running({ replicas: [r('healthy'), r('healthy')] }),
    { status: 'Online', reason: null },
  ],

  // Error: nothing healthy, at least one failed; the reason names the failure.
  [
    'crashed',
    running({ replicaCount: 1, replicas: [r('crashed')] }),
    { status: 'Error', reason: 'crash' },
  ],
  [
    'out of memory',
    running({ replicaCount: 1, replicas: [r('oom')] }),
    { status: 'Error', reason: 'oom' },
  ],
  [
    'health check failed',
    running({ replicaCount: 1, replicas: [r('unhealthy')] }),
    { status: 'Error', reason: 'health_check_failed' },
  ],
  [
    'image pull failed',
    running({ replicaCount: 1, replicas: [r('crashed', 'image_pull_failed')] }),
    { status: 'Error', reason: 'image_pull_failed' },
  ],
  [
    'the source could not be cloned',
    running({ replicaCount: 1, replicas: [r('crashed', 'clone_failed')] }),
    { status: 'Error', reason: 'clone_failed' },
  ],
  [
    'no health check answer in time',
    running({ replicaCount: 1, replicas: [r('unhealthy', 'start_timeout')] }),
    { status: 'Error', reason: 'health_check_failed' },
  ],
  [
    'port held by another process',
    running({ replicaCount: 1, replicas: [r('unhealthy', 'port_in_use')] }),
    { status: 'Error', reason: 'port_in_use' },
  ],
  [
    'port held, the agent gave up on the replica',
    running({ replicaCount: 1, replicas: [r('stopped', 'port_in_use')] }),
    { status: 'Error', reason: 'port_in_use' },
  ],
  [
    'one healthy, one on a held port',
    running({ replicas: [r('healthy'), r('crashed', 'port_in_use')] }),
    { status: 'Degraded', reason: 'port_in_use' },
  ],
  [
    'a reason the service does not know: from the state',
    running({ replicaCount: 1, replicas: [r('oom', 'cosmic_ray')] }),
    { status: 'Error', reason: 'oom' },
  ],
  [
    'a healthy replica is no failure, whatever its reason',
    running({ replicaCount: 1, replicas: [r('healthy', 'crash')] }),
    { status: 'Online', reason: null },
  ],

  // A failed build: Error only when nothing serves (a first deploy); else the serving release's status.
  [
    'build failed, nothing reported',
    running({ buildFailed: true }),
    { status: 'Error', reason: 'build_failed' },
  ],
  [
    'build failed, replicas reported stopped',
    running({ buildFailed: true, replicas: [r('stopped'), r('stopped')] }),
    { status: 'Error', reason: 'build_failed' },
  ],
  [
    'build failed, the serving release healthy',
    running({ buildFailed: true, replicas: [r('healthy'), r('healthy')] }),
    { status: 'Online', reason: null },
  ],
  [
    'build failed, the serving release half up',
    running({ buildFailed: true, replicas: [r('healthy'), r('stopped')] }),
    { status: 'Degraded', reason: null },
  ],
  [
    'build failed, the serving release crashed',
    running({ buildFailed: true, replicas: [r('crashed'), r('stopped')] }),
    { status: 'Error', reason: 'crash' },
  ],
  [
    'build failed, a replica still starting',
    running({ buildFailed: true, replicas: [r('starting')] }),
    { status: 'Starting', reason: null },
  ],
  [
    'build failed but stopped',
    running({ buildFailed: true, desiredState: 'stopped' }),
    { status: 'Stopped', reason: null },
  ],
  [
    'crashed and stopped',
    running({ replicas: [r('stopped'), r('crashed')] }),
    { status: 'Error', reason: 'crash' },
  ],
  [
    'oom and unhealthy: the first failing replica names it',
    running({ replicas: [r('oom'), r('unhealthy')] }),
    { status: 'Error', reason: 'oom' },
  ],

  // Replicas beyond replica_count (left over from a scale-down) are ignored.
  [
    'healthy + a crashed leftover',
    running({ replicaCount: 1, replicas: [r('healthy'), r('crashed')] }),
    { status: 'Online', reason: null },
  ],
  [
    'healthy + a pulling leftover',
    running({ replicaCount: 1, replicas: [r('healthy'), r('pulling')] }),
    { status: 'Online', reason: null },
  ],
  [
    'crashed + a healthy leftover',
    running({ replicaCount: 1, replicas: [r('crashed'), r('healthy')] }),
    { status: 'Error', reason: 'crash' },
  ],
  [
    'two healthy + an oom leftover',
    running({ replicaCount: 2, replicas: [r('healthy'), r('healthy'), r('oom')] }),
    { status: 'Online', reason: null },
  ],
];

describe('frameStatus: the transition table', () => {
  it.each(TABLE)('%s', (_name, facts, expected) => {
    const got = frameStatus(facts);
    expect(got).toEqual(expected);
    expect(FRAME_STATUSES).toContain(got.status);
  });

  it('Suspended wins over every combination of the other facts', () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        expect(frameStatus({ ...facts, billingPastDue: true })).toEqual({
          status: 'Suspended',
          reason: 'billing_past_due',
        });
      }),
    );
  });

  it('desired stopped is always Stopped (unless suspended), backoff_tripped when tripped', () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const got = frameStatus({ ...facts, billingPastDue: false, desiredState: 'stopped' });
        expect(got.status).toBe('Stopped');
        if (facts.backoffTripped) expect(got.reason).toBe('backoff_tripped');
        else expect([null, 'stopping']).toContain(got.reason);
      }),
    );
  });

  it('Error always carries one of the seven failure reasons', () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const got = frameStatus(facts);
        if (got.status === 'Error') expect(ERRORS).toContain(got.reason);
      }),
    );
  });

  it('a failed build never turns a frame with a healthy replica into an Error', () => {
    fc.assert(
      fc.property(factsArb, (facts) => {
        const running = { ...facts, billingPastDue: false, desiredState: 'running' as const };
        const healthy = running.replicas
          .slice(0, running.replicaCount)
          .some((x) => x?.state === 'healthy');
        if (healthy)
          expect(frameStatus({ ...running, buildFailed: true })).toEqual(
            frameStatus({ ...running, buildFailed: false }),
          );
      }),
    );
  });
});

const stateArb = fc.constantFrom<ReplicaState>(
  'pulling',
  'starting',
  'healthy',
  'unhealthy',
  'crashed',
  'oom',
  'stopped',
);
const factsArb: fc.Arbitrary<FrameFacts> = fc.record({
  billingPastDue: fc.boolean(),
  desiredState: fc.constantFrom<'running' | 'stopped'>('running', 'stopped'),
  backoffTripped: fc.boolean(),
  deployInProgress: fc.boolean(),
  replicaCount: fc.integer({ min: 1, max: 4 }),
  replicas: fc.array(
    fc
      .record({ state: stateArb, reason: fc.constantFrom(null, 'bogus', ...REASONS) })
      .map((x) => r(x.state, x.reason)),
    { maxLength: 6 },
  ),
  buildFailed: fc.boolean(),
});

// ---------------------------------------------------------------------------------------------
// Property: any event sequence, real pure functions vs. an independent reference model.
// ---------------------------------------------------------------------------------------------
type Ev =
  | { kind: 'report'; replica: number; type: ReplicaState; reason: string | null }
  | { kind: 'stop' }
  | { kind: 'start' }
  | { kind: 'deploy' }
  | { kind: 'build_failed' }
  | { kind: 'scale'; count: number }
  | { kind: 'billing'; pastDue: boolean };

const evArb: fc.Arbitrary<Ev> = fc.oneof(
  // Reports dominate (crash streaks need runs of them); replicas 0..4 cover those beyond replica_count.
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('report' as const),
      replica: fc.integer({ min: 0, max: 4 }),
      type: stateArb,
      reason: fc.oneof(
        { weight: 3, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constantFrom(...REASONS) },
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('report' as const),
      replica: fc.integer({ min: 0, max: 1 }),
      type: fc.constantFrom<ReplicaState>('crashed', 'oom'),
      reason: fc.constant(null),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'build_failed' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stop' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'start' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'deploy' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('scale' as const),
      count: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('billing' as const), pastDue: fc.boolean() }),
  },
);

/**
 * The system under test: a frame held in the shape the database gives it (FrameWithFacts: replica
 * rows with their generation, the latest deployment), changed the way the services change it
 * (frame-ops-service, frames-service.update, sync-service.applyEvent, billing-service), with the
 * status read through the real factsOf() + frameStatus() and the streak through afterEvent().
 */
class RealFrame {
  generation = 1;
  desired: 'running' | 'stopped' = 'running';
  trippedAt: string | null = null;
  streak = 0;
  replicaCount: number;
  pastDue = false;
  deployment = {
    generation: 1,
    status: 'in_progress' as 'in_progress' | 'succeeded' | 'failed' | 'superseded',
    failure_reason: null as string | null,
  };
  rows = new Map<
    number,
    {
      replica: number;
      generation: number;
      state: ReplicaState;
      reason: string | null;
      deployment_id: null;
      since: string;
    }
  >();

  constructor(replicaCount: number) {
    this.replicaCount = replicaCount;
  }

  apply(e: Ev) {
    switch (e.kind) {
      case 'stop': // frame-ops setDesired: a no-op changes nothing
        if (this.desired !== 'stopped') {
          this.desired = 'stopped';
          this.generation++;
        }
        return;
      case 'start':
        if (this.pastDue) return; // 402
        if (this.desired !== 'running') {
          this.desired = 'running';
          this.generation++;
          this.streak = 0;
          this.trippedAt = null;
        }
        return;
      case 'deploy': // startDeployment (manual)
        if (this.pastDue) return; // 402
        if (this.deployment.status === 'in_progress') this.deployment.status = 'superseded';
        this.generation++;
        this.deployment = {
          generation: this.generation,
          status: 'in_progress',
          failure_reason: null,
        };
        this.streak = 0;
        this.trippedAt = null;
        this.desired = 'running';
        return;
      case 'scale':
        if (e.count !== this.replicaCount) {
          this.replicaCount = e.count;
          this.generation++;
        }
        this.settleDeployment();
        return;
      case 'billing':
        if (e.pastDue !== this.pastDue) {
          this.pastDue = e.pastDue;
          this.generation++;
        }
        return;
      case 'build_failed': // sync-service applyBuild: only a deployment in progress fails
        if (this.deployment.status === 'in_progress')
          this.deployment = {
            ...this.deployment,
            status: 'failed',
            failure_reason: 'build_failed',
          };
        return;
      case 'report': {
        // applyEvent: the event is of the frame's current generation (agent up to date), without a deployment id.
        this.rows.set(e.replica, {
          replica: e.replica,
          generation: this.generation,
          state: e.type,
          reason: e.reason,
          deployment_id: null,
          since: '2026-01-01T00:00:00Z',
        });
        const fails =
          e.type === 'crashed' ||
          e.type === 'oom' ||
          (e.type === 'unhealthy' && (e.reason === 'start_timeout' || e.reason === 'port_in_use'));
        if (this.deployment.status === 'in_progress' && fails) this.deployment.status = 'failed';
        this.settleDeployment();
        const c = afterEvent(this.streak, e.type);
        this.streak = c.streak;
        if (c.trip && this.desired === 'running') {
          this.desired = 'stopped';
          this.trippedAt = '2026-01-01T00:00:00Z';
          this.generation++;
          if (this.deployment.status === 'in_progress')
            this.deployment = {
              ...this.deployment,
              status: 'failed',
              failure_reason: 'backoff_tripped',
            };
        }
        return;
      }
    }
  }

  /**
   * A rollout succeeds once all replica_count replicas of it are healthy (sync-service.applyEvent).
   * Shared with the model on purpose, and checked after every report and every scale: the
   * deployment lifecycle lives in the database and is tested over HTTP (agents.test.ts); here the
   * property isolates what is pure (factsOf, frameStatus, afterEvent).
   */
  settleDeployment() {
    if (this.deployment.status !== 'in_progress') return;
    const healthy = [...this.rows.values()].filter(
      (x) =>
        x.state === 'healthy' &&
        x.generation >= this.deployment.generation &&
        x.replica < this.replicaCount,
    ).length;
    if (healthy >= this.replicaCount) this.deployment.status = 'succeeded';
  }

  status() {
    const row = {
      billing_status: this.pastDue ? 'past_due' : 'active',
      desired_state: this.desired,
      backoff_tripped_at: this.trippedAt,
      replica_count: this.replicaCount,
      crash_streak: this.streak,
      generation: this.generation,
      replicas: [...this.rows.values()].sort((a, b) => a.replica - b.replica),
      latest_deployment: { ...this.deployment, id: 'dep_x', trigger: 'manual' },
    } as unknown as FrameWithFacts;
    return frameStatus(factsOf(row));
  }
}

/**
 * The reference model, from the spec's words: a deploy forgets what the previous rollout
 * reported; replica slots 0..replica_count-1 are what counts; a streak is the number of crash or
 * oom reports since the last healthy one (or since the last fresh attempt: deploy or start).
 */
class Model {
  desired: 'running' | 'stopped' = 'running';
  tripped = false;
  pastDue = false;
  deploying = true;
  buildFailed = false; // the latest deployment's build failed
  replicaCount: number;
  reports = new Map<number, { state: ReplicaState; reason: string | null }>();
  sinceFresh: ReplicaState[] = []; // every report since the last deploy or start

  constructor(replicaCount: number) {
    this.replicaCount = replicaCount;
  }

  get streak() {
    let n = 0;
    for (let i = this.sinceFresh.length - 1; i >= 0 && this.sinceFresh[i] !== 'healthy'; i--) {
      if (this.sinceFresh[i] === 'crashed' || this.sinceFresh[i] === 'oom') n++;
    }
    return n;
  }

  apply(e: Ev) {
    if (e.kind === 'stop') {
      if (this.desired !== 'stopped') this.newDesiredState();
      this.desired = 'stopped';
    } else if (e.kind === 'start' && !this.pastDue && this.desired === 'stopped') {
      this.newDesiredState();
      this.desired = 'running';
      this.tripped = false;
      this.sinceFresh = [];
    } else if (e.kind === 'deploy' && !this.pastDue) {
      this.desired = 'running';
      this.tripped = false;
      this.sinceFresh = [];
      this.deploying = true;
      this.reports.clear();
      this.buildFailed = false;
    } else if (e.kind === 'build_failed' && this.deploying) {
      this.deploying = false;
      this.buildFailed = true;
    } else if (e.kind === 'scale') {
      if (e.count !== this.replicaCount) this.newDesiredState();
      this.replicaCount = e.count;
      if (this.deploying && this.slots().every((s) => s?.state === 'healthy'))
        this.deploying = false;
    } else if (e.kind === 'billing') {
      if (e.pastDue !== this.pastDue) this.newDesiredState();
      this.pastDue = e.pastDue;
    } else if (e.kind === 'report') {
      this.reports.set(e.replica, { state: e.type, reason: e.reason });
      this.sinceFresh.push(e.type);
      if (this.deploying) {
        if (e.type === 'crashed' || e.type === 'oom') this.deploying = false;
        else if (
          e.type === 'unhealthy' &&
          ['start_timeout', 'port_in_use'].includes(e.reason ?? '')
        )
          this.deploying = false;
        else if (this.slots().every((s) => s?.state === 'healthy')) this.deploying = false;
      }
      if (this.desired === 'running' && this.streak >= CRASH_THRESHOLD_IN_SPEC) {
        this.newDesiredState();
        this.desired = 'stopped';
        this.tripped = true;
        this.deploying = false;
      }
    }
  }

  slots() {
    return Array.from({ length: this.replicaCount }, (_, i) => this.reports.get(i));
  }

  /** A new desired state: a replica stopped under the old one has yet to say what it does now. */
  newDesiredState() {
    for (const [i, s] of this.reports) if (s.state === 'stopped') this.reports.delete(i);
  }

  status(): { status: string; reason: string | null } {
    if (this.pastDue) return { status: 'Suspended', reason: 'billing_past_due' };
    if (this.desired === 'stopped') {
      if (this.tripped) return { status: 'Stopped', reason: 'backoff_tripped' };
      const up = [...this.reports.values()].some((x) =>
        ['pulling', 'starting', 'healthy', 'unhealthy'].includes(x.state),
      );
      return { status: 'Stopped', reason: up ? 'stopping' : null };
    }
    const slots = this.slots();
    if (this.deploying) return { status: 'Starting', reason: null };
    const healthy = slots.filter((s) => s?.state === 'healthy').length;
    if (healthy === this.replicaCount) return { status: 'Online', reason: null };
    const why = slots.map((s) => (s ? Model.why(s) : null)).filter((x) => x !== null);
    // Not reported, pulling or starting: on its way up (the agent says when its window passed).
    const onItsWay = (s: (typeof slots)[number]) =>
      !s || s.state === 'pulling' || s.state === 'starting';
    if (healthy > 0) {
      if (why.length > 0) return { status: 'Degraded', reason: at(why, 0) };
      const up = slots.every((s) => s?.state === 'healthy' || onItsWay(s));
      return { status: up ? 'Online' : 'Degraded', reason: null };
    }
    if (slots.some((s) => s && onItsWay(s))) return { status: 'Starting', reason: null };
    if (why.length > 0) return { status: 'Error', reason: at(why, 0) };
    // The first build failed and nothing runs: nothing will, until the next deploy.
    if (this.buildFailed) return { status: 'Error', reason: 'build_failed' };
    return { status: 'Starting', reason: null };
  }

  /**
   * Why a replica failed: what the agent said when it said a known reason (also of one it
   * restarts: pulling or starting again), else its state.
   */
  static why(s: { state: ReplicaState; reason: string | null }): string | null {
    if (s.state === 'healthy') return null;
    if (s.reason === 'start_timeout') return 'health_check_failed';
    if (s.reason && ERRORS.includes(s.reason)) return s.reason;
    return (
      { crashed: 'crash', oom: 'oom', unhealthy: 'health_check_failed' }[s.state as string] ?? null
    );
  }
}
const CRASH_THRESHOLD_IN_SPEC = 5; // spec section 8: "Consecutive crashes before automatic scale-to-zero | 5"

describe('frame status over any sequence of events', () => {
  it('the real pure functions agree with the reference model at every step', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.array(evArb, { maxLength: 60 }),
        (count, events) => {
          const real = new RealFrame(count);
          const model = new Model(count);
          expect(real.status()).toEqual(model.status());
          for (const [i, e] of events.entries()) {
            real.apply(e);
            model.apply(e);
            const got = real.status();
            const ctx = `after step ${i} ${JSON.stringify(e)}`;
            expect(FRAME_STATUSES, ctx).toContain(got.status);
            expect(got, ctx).toEqual(model.status());
            expect(real.streak, ctx).toBe(model.streak);
            expect(real.desired, ctx).toBe(model.desired);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a report from a replica beyond replica_count never stands in for a replica that has not reported', () => {
    // replica_count 1; replica 1 (a leftover) is healthy on the current rollout, replica 0 has not reported.
    const row = {
      billing_status: 'active',
      desired_state: 'running',
      backoff_tripped_at: null,
      replica_count: 1,
      generation: 2,
      latest_deployment: { id: 'dep_x', status: 'failed', generation: 2, trigger: 'manual' },
      replicas: [
        {
          replica: 1,
          generation: 2,
          state: 'healthy',
          reason: null,
          deployment_id: null,
          since: '2026-01-01T00:00:00Z',
        },
      ],
    } as unknown as FrameWithFacts;
    expect(frameStatus(factsOf(row)).status).not.toBe('Online');
    // replica_count 2: replica 0 silent, replica 1 starting, replica 2 (a leftover) healthy:
    // nothing of the frame serves yet.
    const two = {
      ...row,
      replica_count: 2,
      replicas: [1, 2].map((replica) => ({
        replica,
        generation: 2,
        state: replica === 1 ? 'starting' : 'healthy',
        reason: null,
        deployment_id: null,
        since: '2026-01-01T00:00:00Z',
      })),
    } as unknown as FrameWithFacts;
    expect(frameStatus(factsOf(two)).status).toBe('Starting');
  });
});

describe('scaling, through the rows the sync keeps (factsOf)', () => {
  const frame = (generation: number, states: string[]) =>
    ({
      billing_status: 'active',
      desired_state: 'running',
      backoff_tripped_at: null,
      replica_count: states.length,
      generation,
      latest_deployment: { id: 'dep_x', status: 'succeeded', generation: 1, trigger: 'manual' },
      replicas: states.map((state, replica) => ({
        replica,
        generation: 3,
        state,
        reason: null,
        deployment_id: 'dep_x',
        since: '2026-01-01T00:00:00Z',
      })),
    }) as unknown as FrameWithFacts;

  it('a replica stopped by a scale-down and wanted again by a scale-up is coming up', () => {
    // Scaled down to 1 at generation 3 (replica 1 reported stopped), up to 2 at generation 4.
    expect(frameStatus(factsOf(frame(4, ['healthy', 'stopped'])))).toEqual({
      status: 'Online',
      reason: null,
    });
    // Stopped under the current generation: the agent stopped a replica it should run.
    expect(frameStatus(factsOf(frame(3, ['healthy', 'stopped'])))).toEqual({
      status: 'Degraded',
      reason: null,
    });
  });

  it('a healthy replica with the others only on their way up is Online', () => {
    const comingUp = fc.constantFrom<ObservedReplica | undefined>(
      undefined,
      r('pulling'),
      r('starting'),
    );
    fc.assert(
      fc.property(
        fc.array(comingUp, { minLength: 1, maxLength: 4 }),
        fc.nat({ max: 4 }),
        (others, at) => {
          const replicas = [...others];
          replicas.splice(Math.min(at, replicas.length), 0, r('healthy'));
          expect(frameStatus(running({ replicaCount: replicas.length, replicas }))).toEqual({
            status: 'Online',
            reason: null,
          });
        },
      ),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// backoff.ts
// ---------------------------------------------------------------------------------------------
describe('back-off rules (backoff.ts)', () => {
  it('the threshold and the pull timeout are the spec limits', () => {
    expect(CRASH_THRESHOLD).toBe(5);
    expect(PULL_TIMEOUT_SECONDS).toBe(180);
  });

  it('the streak counts crash and oom since the last healthy report, and resets on healthy', () => {
    fc.assert(
      fc.property(fc.nat({ max: 20 }), fc.array(stateArb, { maxLength: 40 }), (start, types) => {
        let streak = start;
        let expected = start;
        for (const t of types) {
          const c = afterEvent(streak, t);
          if (t === 'healthy') expected = 0;
          else if (t === 'crashed' || t === 'oom') expected++;
          expect(c.streak).toBe(expected);
          expect(c.trip).toBe((t === 'crashed' || t === 'oom') && expected >= 5);
          if (t === 'healthy') expect(c.trip).toBe(false);
          streak = c.streak;
        }
      }),
    );
  });

  it('from a fresh streak, the first trip is exactly the 5th consecutive crash or oom', () => {
    fc.assert(
      fc.property(fc.array(stateArb, { maxLength: 60 }), (types) => {
        let streak = 0;
        let run = 0;
        let firstTrip = -1;
        let expectedFirst = -1;
        types.forEach((t, i) => {
          const c = afterEvent(streak, t);
          streak = c.streak;
          if (t === 'healthy') run = 0;
          else if (t === 'crashed' || t === 'oom') run++;
          if (run === 5 && expectedFirst < 0) expectedFirst = i;
          if (c.trip && firstTrip < 0) firstTrip = i;
        });
        expect(firstTrip).toBe(expectedFirst);
      }),
    );
  });

  it('four crashes, one healthy, four crashes never trip', () => {
    const seq: ReplicaState[] = [
      'crashed',
      'oom',
      'crashed',
      'crashed',
      'healthy',
      'crashed',
      'crashed',
      'oom',
      'crashed',
    ];
    let streak = 0;
    for (const t of seq) {
      const c = afterEvent(streak, t);
      expect(c.trip).toBe(false);
      streak = c.streak;
    }
    expect(streak).toBe(4);
  });

  it('other reports (pulling, starting, unhealthy, stopped) neither count nor reset the streak', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 10 }),
        fc.constantFrom<ReplicaState>('pulling', 'starting', 'unhealthy', 'stopped'),
        (streak, t) => {
          expect(afterEvent(streak, t)).toEqual({ streak, trip: false });
        },
      ),
    );
  });

  it('pullStuck is true exactly after 180 s of pulling', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: -1000, max: 1_000_000 }),
        (since, elapsedMs) => {
          const from = new Date(since);
          const now = new Date(since + elapsedMs);
          expect(pullStuck(from, now)).toBe(elapsedMs > 180_000);
          expect(pullStuck(null, now)).toBe(false);
        },
      ),
    );
    const t0 = new Date('2026-03-01T12:00:00.000Z');
    expect(pullStuck(t0, new Date(t0.getTime() + 180_000))).toBe(false);
    expect(pullStuck(t0, new Date(t0.getTime() + 180_001))).toBe(true);
  });

  it('pullDeadline is the first instant at which the pull is stuck', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_000_000_000_000 }), (since) => {
        const from = new Date(since);
        const due = pullDeadline(from);
        expect(pullStuck(from, due)).toBe(true);
        expect(pullStuck(from, new Date(due.getTime() - 1))).toBe(false);
      }),
    );
  });
});
