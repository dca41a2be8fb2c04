// Schemas of a frame's deployments and releases: what the release routes take and answer.
import { Type } from 'typebox';
import {
  FULL_COMMIT_PATTERN,
  IdParam,
  ListOf,
  Nullable,
  NullableTimestamp,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import { FailureMessage, FailureReason, FrameParams } from '../frames/frames-schemas.ts';
import { TRIGGERS } from './deployments.ts';

export const Deployment = Type.Object(
  {
    id: Type.String(),
    frame_id: Type.String(),
    trigger: StringEnum(TRIGGERS, {
      description:
        'What made it: create, manual (deploy), push, reroll (a port change), rollback, ' +
        'restart, config (an env or settings change applied as a release)',
    }),
    status: StringEnum(['in_progress', 'succeeded', 'failed', 'superseded', 'canceled']),
    git_repository: Type.String(),
    git_repository_owner: Type.String(),
    git_repository_branch: Type.String(),
    commit_sha: Nullable(
      Type.String({
        description: 'The pushed commit, or the one the agent resolved the branch to',
      }),
    ),
    release_of: Nullable(
      Type.String({
        description:
          'The deployment whose build it runs (a rollback, a restart): nothing was built for it',
      }),
    ),
    image: Nullable(
      Type.String({
        description:
          'The image it runs (docker, swarm), as its agent reported it; null on the process ' +
          'runtime, whose build is a directory the agent keeps',
      }),
    ),
    settings: Nullable(
      Type.Object(
        {
          port: Type.Integer(),
          replica_count: Type.Integer(),
          health_check_path: Type.String(),
        },
        { description: 'The settings it started with; null for one made before they were kept' },
      ),
    ),
    failure_reason: FailureReason,
    failure_message: FailureMessage,
    created_by: Nullable(Type.String()),
    created_at: Timestamp,
    finished_at: NullableTimestamp,
  },
  { $id: 'Deployment' },
);

const EnvChange = Type.Object(
  {
    key: Type.String(),
    from: Type.Optional(Type.String({ description: 'Only for those who may read env values' })),
    to: Type.Optional(Type.String({ description: 'Only for those who may read env values' })),
  },
  { title: 'EnvChange' },
);
const Setting = Type.Union([Type.String(), Type.Integer(), Type.Null()]);
export const ReleaseChanges = Type.Object(
  {
    against: Type.String({ description: 'The release it is compared with: the one before it' }),
    commits: Nullable(
      Type.Object(
        { from: Nullable(Type.String()), to: Nullable(Type.String()) },
        { description: 'The commit range; null when both ran the same commit' },
      ),
    ),
    env: Type.Object({
      added: Type.Array(EnvChange),
      changed: Type.Array(EnvChange),
      removed: Type.Array(EnvChange),
    }),
    settings: Type.Array(Type.Object({ field: Type.String(), from: Setting, to: Setting })),
  },
  { $id: 'ReleaseChanges' },
);
export const Release = Type.Object(
  {
    ...Deployment.properties,
    changes: Type.Union([Type.Ref('ReleaseChanges'), Type.Null()], {
      description:
        'What it changed against the release before it; null when history holds none (the ' +
        'first release, or an older one pruned)',
    }),
  },
  { $id: 'Release' },
);
export const ReleaseList = ListOf(Type.Ref('Release'));
export const DeployBody = Type.Object(
  {
    commit_sha: Type.Optional(
      Type.String({
        pattern: FULL_COMMIT_PATTERN,
        description: "A commit to build, its whole hash; none: the branch's head",
      }),
    ),
  },
  { additionalProperties: false },
);
export const RollbackBody = Type.Object(
  {
    config: Type.Optional(
      StringEnum(['release', 'current'], {
        description:
          "release: with the env it ran (as Railway); current: with the frame's env as it is now",
      }),
    ),
  },
  { additionalProperties: false },
);
export const DeploymentParams = Type.Object({
  ...FrameParams.properties,
  deployment_id: IdParam('dep'),
});
