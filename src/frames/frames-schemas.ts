import { Type } from 'typebox';
import {
  IdParam,
  ListOf,
  Nullable,
  NullableEnum,
  NullableTimestamp,
  PlainName,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import { EnvValue, envRecord } from '../env/env-schemas.ts';
import { FRAME_STATUSES } from './frame-status.ts';

// Ports: 1024..65535, minus the ones the platform keeps for itself (spec 2 and 8).
export const RESERVED_PORTS = [6379, 27017, 9898, 27018];
export const Port = Type.Integer({
  minimum: 1024,
  maximum: 65535,
  not: { enum: RESERVED_PORTS },
  description: '1024..65535, not 6379, 27017, 9898 or 27018',
});
export const ReplicaCount = Type.Integer({ minimum: 1, maximum: 100 });
const FrameName = PlainName({ maxLength: 100 });
const RepoName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' });
const RepoOwner = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' });
// A git branch name: no spaces, control characters, "..", or leading "-" or "/".
const Branch = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^(?![-/])(?!.*\\.\\.)(?!.*//)[A-Za-z0-9._/+-]+(?<![/.])$',
});

// Checked in the service (frame-settings.ts healthCheckPathProblem) for one message that says what to send.
export const HealthCheckPath = Type.String({
  maxLength: 1000,
  description:
    'The path the agent probes: starts with "/", at most 200 characters, no whitespace or control characters; default "/"',
});
export const FAILURE_REASONS = [
  'crash',
  'oom',
  'health_check_failed',
  'image_pull_failed',
  'clone_failed',
  'port_in_use',
  'build_failed',
  'backoff_tripped',
] as const;
export const FailureReason = NullableEnum(FAILURE_REASONS, {
  description: 'Why the deployment failed (null unless status is failed)',
});
export const FailureMessage = Nullable(
  Type.String({
    description: 'What the agent said of the failure (a build log tail), if anything',
  }),
);

export const CreateFrameBody = Type.Object(
  {
    name: FrameName,
    owner_id: Type.String({ minLength: 1, maxLength: 64 }),
    git_repository: RepoName,
    git_repository_owner: RepoOwner,
    git_repository_branch: Branch,
    port: Port,
    replica_count: Type.Optional(ReplicaCount),
    health_check_path: Type.Optional(HealthCheckPath),
    agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { title: 'CreateFrameBody', additionalProperties: false },
);

export const UpdateFrameBody = Type.Object(
  {
    name: Type.Optional(FrameName),
    git_repository_name: Type.Optional(RepoName),
    git_repository_owner: Type.Optional(RepoOwner),
    git_repository_branch: Type.Optional(Branch),
    port: Type.Optional(Port),
    replica_count: Type.Optional(ReplicaCount),
    health_check_path: Type.Optional(HealthCheckPath),
    previews: Type.Optional(
      Type.Object(
        {
          enabled: Type.Optional(Type.Boolean()),
          ttl_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90 })),
          env: Type.Optional(
            envRecord(EnvValue, "Replaces the env previews get on top of this frame's"),
          ),
        },
        {
          additionalProperties: false,
          minProperties: 1,
          description: 'Preview frames of other branches and pull requests (opt-in)',
        },
      ),
    ),
    push_deploys: Type.Optional(
      Type.Object(
        { enabled: Type.Boolean() },
        {
          additionalProperties: false,
          description:
            'Resume (true) or pause (false) deploys on a git push; a rollback pauses them',
        },
      ),
    ),
  },
  { title: 'UpdateFrameBody', additionalProperties: false, minProperties: 1 },
);

export const Frame = Type.Object(
  {
    id: Type.String(),
    project_id: Type.String(),
    space_id: Type.String(),
    name: Type.String(),
    hostname: Type.String({
      description:
        "The frame's own hostname, `<name>-<6 characters of its id>.<APPS_DOMAIN>`: made at " +
        'creation, kept through renames, released with the frame',
    }),
    url: Nullable(
      Type.String({
        description:
          "Where the frame answers, through its agent's edge: `https://<hostname>` when the " +
          'edge has TLS, else `http://<hostname>:<port>` (no port when 80); null when its ' +
          'agent has no edge or has not said where it serves',
      }),
    ),
    owner_id: Type.String(),
    git_repository: Type.String(),
    git_repository_name: Type.String(),
    git_repository_owner: Type.String(),
    git_repository_branch: Type.String(),
    port: Type.Integer(),
    health_check_path: Type.String(),
    replica_count: Type.Integer(),
    status: StringEnum(FRAME_STATUSES),
    status_reason: Nullable(Type.String()),
    desired_state: StringEnum(['running', 'stopped']),
    // One object schema rather than a union of two (see StringEnum); its type stays the union.
    runtime: Type.Unsafe<{ kind: 'cloud' } | { kind: 'agent'; agent_id: string }>(
      Type.Object({
        kind: StringEnum(['cloud', 'agent']),
        agent_id: Type.Optional(
          Type.String({ description: 'The self-hosted agent, when kind is agent' }),
        ),
      }),
    ),
    agent_id: Nullable(Type.String()),
    agent_online: Type.Boolean(),
    agent_last_seen_at: NullableTimestamp,
    backoff: Type.Object({
      crash_streak: Type.Integer(),
      threshold: Type.Integer(),
      pulling_since: NullableTimestamp,
      tripped_at: NullableTimestamp,
      clears_on: Type.Array(Type.String()),
    }),
    replicas: Type.Array(
      Type.Object({
        replica: Type.Integer(),
        state: Type.String(),
        generation: Type.Integer(),
        since: Timestamp,
      }),
    ),
    latest_deployment: Nullable(
      Type.Object({
        id: Type.String(),
        status: Type.String(),
        trigger: Type.String(),
        commit_sha: Nullable(Type.String()),
        failure_reason: FailureReason,
        failure_message: FailureMessage,
        created_at: Timestamp,
      }),
    ),
    serving: Nullable(
      Type.Object(
        { deployment_id: Type.String(), commit_sha: Nullable(Type.String()) },
        {
          description:
            'The newest deployment a healthy replica runs: during a rollout, or after a failed build, the release that still serves',
        },
      ),
    ),
    pending_changes: Type.Array(Type.String(), {
      description: 'Settings saved but not yet deployed',
    }),
    push_deploys: Type.Object(
      {
        enabled: Type.Boolean(),
        paused_at: NullableTimestamp,
        paused_by: Nullable(
          Type.String({ description: 'The rollback that paused them; null: paused by hand' }),
        ),
      },
      {
        description:
          'Whether a git push deploys the frame: a rollback pauses it until resumed (PATCH the ' +
          'frame with {"push_deploys": {"enabled": true}})',
      },
    ),
    previews: Type.Object(
      {
        enabled: Type.Boolean(),
        ttl_days: Type.Integer(),
        env_keys: Type.Array(Type.String(), {
          description: "The env a preview gets on top of this frame's (values are write-only)",
        }),
      },
      {
        description:
          'Whether a push to another branch, or a pull request against this one, makes a ' +
          'preview frame; removed after ttl_days without a push',
      },
    ),
    preview: Nullable(
      Type.Object(
        {
          of: Type.String({ description: 'The frame it previews' }),
          branch: Type.String(),
          pull_request: Nullable(Type.Integer()),
          pushed_at: Timestamp,
          expires_at: Type.String({
            format: 'date-time',
            description: 'When it is removed unless pushed to again',
          }),
        },
        { description: 'Set on a preview frame' },
      ),
    ),
    generation: Type.Integer({ description: 'Bumped whenever what the agent must run changes' }),
    version: Type.Integer({
      description: 'Bumped on every change made through the API; the ETag is built from it',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Frame' },
);
export const FrameList = ListOf(Type.Ref('Frame'));

export const DeletedFrame = Type.Object(
  {
    id: Type.String(),
    deleted: Type.Literal(true),
    released: Type.Object({
      domains: Type.Array(Type.Object({ id: Type.String(), hostname: Type.String() })),
      volumes: Type.Array(
        Type.Object({
          id: Type.String(),
          name: Type.String(),
          mount_path: Type.String(),
          size_gb: Type.Integer(),
        }),
      ),
    }),
  },
  { title: 'DeletedFrame' },
);

export const SpaceFramesParams = Type.Object({
  project_id: IdParam('prj'),
  space_id: IdParam('spc'),
});
export const FrameParams = Type.Object({
  project_id: IdParam('prj'),
  space_id: IdParam('spc'),
  frame_id: IdParam('frm'),
});
/** `?deploy=true` on a settings or env write: applied at once, as a release. */
export const ApplyQuery = Type.Object({
  deploy: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        'Apply the change at once as a release (trigger config): the serving build with the ' +
        'saved env and settings, nothing built (a build when nothing serves or the git ' +
        'settings changed)',
    }),
  ),
});

export const FrameReadQuery = Type.Object({
  wait_for: Type.Optional(StringEnum(FRAME_STATUSES)),
  timeout: Type.Optional(Type.Integer({ minimum: 0, maximum: 60, default: 30 })),
});
