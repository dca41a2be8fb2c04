// The items of a sync body (CONTRACT 6): replica events, build reports, log lines. One schema
// for both sides: the service validates the body with it (agents-schemas.ts) and the agent
// checks each item with it before queueing it (runner/sync-check.ts), so one bad item is caught
// alone instead of making the server refuse a whole report. The agent loads this module at run
// time: it imports typebox and pure modules only, nothing of the server (no database, no
// http/schemas.ts, which loads pg).
import { Type } from 'typebox';
import { REPLICA_REASONS, REPLICA_STATES } from '../frames/frame-status.ts';

export const MAX_LINE_CHARS = 8192;
export const MAX_BUILD_MESSAGE_CHARS = 2000;
export const COMMIT_SHA_PATTERN = '^[0-9a-f]{7,64}$';
export const IMAGE_ID_PATTERN = '^sha256:[0-9a-f]{64}$';

/** One of a few strings, as http/schemas.ts's StringEnum writes it (not imported: see above). */
const oneOf = <const V extends readonly string[]>(values: V) =>
  Object.assign(Type.Unsafe<V[number]>({ enum: [...values] }), { type: 'string' as const });

const FrameId = Type.String({ minLength: 1, maxLength: 64 });
const DeploymentId = Type.String({ minLength: 1, maxLength: 64 });
const Replica = Type.Integer({ minimum: 0, maximum: 999 });

export const SyncEventItem = Type.Object(
  {
    frame_id: FrameId,
    replica: Replica,
    type: oneOf(REPLICA_STATES),
    at: Type.Optional(Type.String({ format: 'date-time' })),
    generation: Type.Optional(Type.Integer({ minimum: 0 })),
    deployment_id: Type.Optional(
      Type.String({
        ...DeploymentId,
        description: 'The deployment whose release the replica runs',
      }),
    ),
    detail: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), {
        description:
          `detail.reason: one of ${REPLICA_REASONS.join(', ')}; ` +
          'detail.message: what to show of a failure',
      }),
    ),
  },
  { additionalProperties: false },
);

export const BuildReportItem = Type.Object(
  {
    deployment_id: DeploymentId,
    state: oneOf(['building', 'succeeded', 'failed']),
    commit_sha: Type.Optional(
      Type.String({
        pattern: COMMIT_SHA_PATTERN,
        description: 'The commit the agent resolved the branch to',
      }),
    ),
    image: Type.Optional(
      Type.String({
        pattern: IMAGE_ID_PATTERN,
        description: 'The image the release runs (docker, swarm); none on the process runtime',
      }),
    ),
    message: Type.Optional(
      Type.String({
        maxLength: MAX_BUILD_MESSAGE_CHARS,
        description: 'Why the build failed (a log tail)',
      }),
    ),
    at: Type.Optional(Type.String({ format: 'date-time' })),
  },
  { additionalProperties: false },
);

export const SyncLogItem = Type.Object(
  {
    frame_id: FrameId,
    replica: Replica,
    at: Type.String({ format: 'date-time' }),
    line: Type.String({ maxLength: MAX_LINE_CHARS }),
    source: Type.Optional(
      Type.Union([Type.Literal('app'), Type.Literal('build'), Type.Literal('edge')], {
        description: "Where the line came from; the app's when absent",
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Upper bounds, in ms, of the buckets of the edge's request-latency histogram; one more bucket
 * counts what took longer. Histograms add up (a minute's, an hour's), percentiles do not: the
 * service keeps the counts and reads p50/p95/p99 from them.
 */
export const LATENCY_BOUNDS_MS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000,
] as const;

const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** The time a sample covers: since the agent's last sample of the same replica or frame. */
const Seconds = Type.Number({ exclusiveMinimum: 0, maximum: 3600 });

/** What one replica used over `seconds`, read from its runtime (Docker's stats, cgroups). */
export const SyncReplicaMetricItem = Type.Object(
  {
    frame_id: FrameId,
    replica: Replica,
    seconds: Seconds,
    cpu_seconds: Type.Number({ minimum: 0, description: 'CPU time used over `seconds`' }),
    memory_bytes: Type.Optional(Count),
    memory_limit_bytes: Type.Optional(Count),
    net_rx_bytes: Type.Optional(Count),
    net_tx_bytes: Type.Optional(Count),
    restarts: Type.Optional(Count),
  },
  { additionalProperties: false },
);

/** What the agent's edge answered for one frame over `seconds`: counts by status class and
 *  a latency histogram (LATENCY_BOUNDS_MS). The edge's own pages (503 starting…) count too. */
export const SyncRequestMetricItem = Type.Object(
  {
    frame_id: FrameId,
    seconds: Seconds,
    status: Type.Object(
      { '1xx': Count, '2xx': Count, '3xx': Count, '4xx': Count, '5xx': Count },
      { additionalProperties: false },
    ),
    latency: Type.Array(Count, {
      minItems: LATENCY_BOUNDS_MS.length + 1,
      maxItems: LATENCY_BOUNDS_MS.length + 1,
    }),
  },
  { additionalProperties: false },
);
