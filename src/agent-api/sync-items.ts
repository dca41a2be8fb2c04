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
  },
  { additionalProperties: false },
);
