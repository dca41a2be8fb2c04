import { Type } from 'typebox';
import { IdParam, ListOf, Nullable, NullableTimestamp, StringEnum, Timestamp } from '../http/schemas.ts';
import { REPLICA_STATES } from '../frames/frame-status.ts';

const agentFields = {
  id: Type.String(), name: Type.String(), kind: StringEnum(['cloud', 'self_hosted']),
  project_id: Nullable(Type.String()), online: Type.Boolean(), last_seen_at: NullableTimestamp, created_at: Timestamp,
};
export const Agent = Type.Object(agentFields, { $id: 'Agent' });
export const NewAgent = Type.Object({ ...agentFields, token: Type.String({ description: 'Shown once' }) });
export const AgentList = ListOf(Type.Ref('Agent'));
export const AgentBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const AgentParams = Type.Object({ project_id: IdParam('prj'), agent_id: IdParam('agt') });

const FrameId = Type.String({ minLength: 1, maxLength: 64 });
export const SyncBody = Type.Object({
  events: Type.Optional(Type.Array(Type.Object({
    frame_id: FrameId,
    replica: Type.Integer({ minimum: 0, maximum: 999 }),
    type: StringEnum(REPLICA_STATES),
    at: Type.Optional(Type.String({ format: 'date-time' })),
    generation: Type.Optional(Type.Integer({ minimum: 0 })),
    detail: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown())),
  }, { additionalProperties: false }), { maxItems: 5000 })),
  logs: Type.Optional(Type.Array(Type.Object({
    frame_id: FrameId,
    replica: Type.Integer({ minimum: 0, maximum: 999 }),
    at: Type.String({ format: 'date-time' }),
    line: Type.String({ maxLength: 8192 }),
  }, { additionalProperties: false }), { maxItems: 5000 })),
}, { additionalProperties: false });
export const SyncQuery = Type.Object({ wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 30 })) });
export const SyncAnswer = Type.Object({
  frames: Type.Array(Type.Object({
    frame_id: Type.String(), generation: Type.Integer(), desired_state: StringEnum(['running', 'stopped']),
    replica_count: Type.Integer(), port: Type.Integer(), git_repository_owner: Type.String(), git_repository: Type.String(),
    git_repository_branch: Type.String(), deployment_id: Type.String(), commit_sha: Nullable(Type.String()),
    env: Type.Record(Type.String(), Type.String()),
    volumes: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), mount_path: Type.String(), size_gb: Type.Integer() })),
  })),
  sync_after_ms: Type.Integer(),
});
