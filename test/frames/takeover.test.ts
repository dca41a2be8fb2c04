// A new release takes over only once healthy (CONTRACT 5), pure: which replica reports of a
// rollout go to the replica's row and to the crash streak (src/frames/takeover.ts).
import { describe, expect, it } from 'vitest';
import { eventEffect, type ReplicaRow } from '../../src/frames/takeover.ts';
import type { ReplicaState } from '../../src/frames/frame-status.ts';

// Deployment ids sort by creation: v1 is older than v2.
const V1 = 'dep_01AAAAAAAAAAAAAAAAAAAAAAAA';
const V2 = 'dep_01BBBBBBBBBBBBBBBBBBBBBBBB';
const row = (replica: number, state: string, deployment_id: string | null): ReplicaRow => ({
  replica,
  state,
  deployment_id,
});
const V1_SERVES = [row(0, 'healthy', V1), row(1, 'healthy', V1)];
const ALL = { save: true, countsForBackoff: true, serving: [] };

type Case = [
  string,
  { type: ReplicaState; deployment_id?: string | null; replica?: number },
  ReplicaRow[],
  ReturnType<typeof eventEffect>,
];
const TABLE: Case[] = [
  // A new release while the old one serves: its failures are its own.
  [
    'v2 crashes while v1 serves',
    { type: 'crashed', deployment_id: V2 },
    V1_SERVES,
    { save: false, countsForBackoff: false, serving: [V1] },
  ],
  [
    'v2 runs out of memory while v1 serves',
    { type: 'oom', deployment_id: V2 },
    V1_SERVES,
    { save: false, countsForBackoff: false, serving: [V1] },
  ],
  [
    'v2 never answers its health check while v1 serves',
    { type: 'unhealthy', deployment_id: V2 },
    V1_SERVES,
    { save: false, countsForBackoff: false, serving: [V1] },
  ],
  [
    'v2 pulling or starting while v1 serves leaves v1 rows alone',
    { type: 'starting', deployment_id: V2 },
    V1_SERVES,
    { save: false, countsForBackoff: false, serving: [V1] },
  ],
  [
    'v2 healthy takes its row (that is how it takes over) and ends a streak',
    { type: 'healthy', deployment_id: V2 },
    V1_SERVES,
    { save: true, countsForBackoff: true, serving: [V1] },
  ],
  [
    'v2 crashes on a row it already holds while v1 still serves another',
    { type: 'crashed', deployment_id: V2, replica: 0 },
    [row(0, 'healthy', V2), row(1, 'healthy', V1)],
    { save: true, countsForBackoff: false, serving: [V1] },
  ],
  [
    'v2 crashes on a row of its own while v1 serves the other',
    { type: 'crashed', deployment_id: V2, replica: 1 },
    [row(0, 'healthy', V1), row(1, 'crashed', V2)],
    { save: true, countsForBackoff: false, serving: [V1] },
  ],
  [
    'v2 crashes on a replica index v1 has no row for',
    { type: 'crashed', deployment_id: V2, replica: 1 },
    [row(0, 'healthy', V1)],
    { save: true, countsForBackoff: false, serving: [V1] },
  ],
  // Nothing serves: everything counts, as it always did.
  ['first deploy: v1 crashes', { type: 'crashed', deployment_id: V1 }, [], ALL],
  [
    'first deploy: v1 crashes after another of its replicas came up',
    { type: 'crashed', deployment_id: V1, replica: 1 },
    [row(0, 'healthy', V1), row(1, 'crashed', V1)],
    ALL,
  ],
  [
    'v2 crashes while v1 crashes too',
    { type: 'crashed', deployment_id: V2 },
    [row(0, 'crashed', V1), row(1, 'unhealthy', V1)],
    ALL,
  ],
  [
    'v2 crashes while v1 is stopped',
    { type: 'crashed', deployment_id: V2 },
    [row(0, 'stopped', null)],
    ALL,
  ],
  [
    'a healthy v1 row beyond replica_count serves nothing',
    { type: 'crashed', deployment_id: V2 },
    [row(0, 'crashed', V2), row(2, 'healthy', V1)],
    ALL,
  ],
  // The serving release's own reports, and reports that name no release.
  ['v1 crashes while it serves', { type: 'crashed', deployment_id: V1 }, V1_SERVES, ALL],
  [
    'v1 (the old release) crashes while v2 has taken some rows',
    { type: 'crashed', deployment_id: V1, replica: 1 },
    [row(0, 'healthy', V2), row(1, 'healthy', V1)],
    ALL,
  ],
  [
    'v2 alone serves and crashes',
    { type: 'crashed', deployment_id: V2 },
    [row(0, 'healthy', V2)],
    ALL,
  ],
  ['a report without a deployment id (an older agent)', { type: 'crashed' }, V1_SERVES, ALL],
  [
    'healthy rows without a deployment id say nothing of which release serves',
    { type: 'crashed', deployment_id: V2 },
    [row(0, 'healthy', null)],
    ALL,
  ],
];

describe('eventEffect: a new release takes over only once healthy', () => {
  it.each(TABLE)('%s', (_name, event, rows, expected) => {
    expect(eventEffect({ event: { replica: 0, ...event }, rows, replicaCount: 2 })).toEqual(
      expected,
    );
  });
});
