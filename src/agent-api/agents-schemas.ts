import { Type } from 'typebox';
import {
  IdParam,
  ListOf,
  Nullable,
  NullableTimestamp,
  PATTERN_MESSAGES,
  PlainName,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import {
  BuildReportItem,
  SyncEventItem,
  SyncLogItem,
  SyncReplicaMetricItem,
  SyncRequestMetricItem,
} from './sync-items.ts';

const agentFields = {
  id: Type.String(),
  name: Type.String(),
  kind: StringEnum(['cloud', 'self_hosted']),
  project_id: Nullable(Type.String()),
  online: Type.Boolean(),
  last_seen_at: NullableTimestamp,
  created_at: Timestamp,
};
export const Agent = Type.Object(agentFields, { $id: 'Agent' });
export const NewAgent = Type.Object(
  {
    ...agentFields,
    token: Type.String({ description: 'Shown once' }),
    install: Type.Object(
      {
        package_url: Type.String({
          description: 'The CLI and the agent, served by this service (no registry involved)',
        }),
        checksum_url: Type.String({ description: "The package's SHA-256" }),
        command: Type.String({
          description: 'Install, then run the agent with this token (on the agent machine)',
        }),
      },
      { description: 'How to run this agent on another machine' },
    ),
  },
  { title: 'NewAgent' },
);
export const AgentList = ListOf(Type.Ref('Agent'));
export const AgentBody = Type.Object(
  { name: PlainName({ maxLength: 100 }) },
  { title: 'AgentBody', additionalProperties: false },
);
export const AgentParams = Type.Object({ project_id: IdParam('prj'), agent_id: IdParam('agt') });

// The digest of a desired state (desired-state-dal.ts, stateDigest): an md5 in hex.
const STATE_PATTERN = '^[0-9a-f]{32}$';
PATTERN_MESSAGES.set(
  STATE_PATTERN,
  'must be the `state` of an earlier sync answer: 32 lowercase hexadecimal digits',
);

export const SyncBody = Type.Object(
  {
    known_state: Type.Optional(
      Type.String({
        pattern: STATE_PATTERN,
        description:
          'The `state` of the last answer the agent holds: while it is current, the answer is ' +
          '`{unchanged: true}` without `frames`',
      }),
    ),
    events: Type.Optional(Type.Array(SyncEventItem, { maxItems: 5000 })),
    builds: Type.Optional(
      Type.Array(BuildReportItem, {
        maxItems: 500,
        description: 'Applied before the events of the same sync',
      }),
    ),
    logs: Type.Optional(Type.Array(SyncLogItem, { maxItems: 5000 })),
    metrics: Type.Optional(
      Type.Object(
        {
          replicas: Type.Optional(Type.Array(SyncReplicaMetricItem, { maxItems: 5000 })),
          requests: Type.Optional(Type.Array(SyncRequestMetricItem, { maxItems: 5000 })),
        },
        {
          additionalProperties: false,
          description:
            'Samples since the last sync (about every 10 s): what each replica used, and what ' +
            "the agent's edge answered for each frame. Stored by the service's clock.",
        },
      ),
    ),
    edge: Type.Optional(
      Nullable(
        Type.Object(
          {
            http_port: Type.Integer({ minimum: 1, maximum: 65535 }),
            https_port: Nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
          },
          {
            additionalProperties: false,
            description:
              "The agent's edge (CONTRACT 5b), sent with its first sync: where it serves its " +
              'frames by hostname (`https_port` when it has TLS); null: it has none, and its ' +
              'frames have no `url`. Absent: as last said.',
          },
        ),
      ),
    ),
  },
  { title: 'SyncBody', additionalProperties: false },
);
export const SyncQuery = Type.Object({
  wait: Type.Optional(Type.Integer({ minimum: 0, maximum: 30 })),
});
export const SyncAnswer = Type.Object(
  {
    state: Type.String({
      description: 'The digest of the desired state: send it back as `known_state` to skip it',
    }),
    unchanged: Type.Optional(
      Type.Literal(true, { description: 'The known_state sent is current; no frames follow' }),
    ),
    frames: Type.Optional(
      Type.Array(
        Type.Object({
          frame_id: Type.String(),
          project_id: Type.Optional(
            Type.String({
              description: "The frame's project (never changes): a cluster's namespace per project",
            }),
          ),
          generation: Type.Integer(),
          desired_state: StringEnum(['running', 'stopped']),
          replica_count: Type.Integer(),
          port: Type.Integer(),
          health_check_path: Type.String(),
          build_failed: Type.Boolean({
            description: 'The latest deployment failed to build: do not build it again',
          }),
          git_repository_owner: Type.String(),
          git_repository: Type.String(),
          git_repository_branch: Type.String(),
          deployment_id: Type.String(),
          commit_sha: Nullable(Type.String()),
          release_of: Type.Optional(
            Nullable(
              Type.String({
                description:
                  "Run this deployment's build, if still kept, instead of building commit_sha " +
                  '(a rollback, a restart); null: build',
              }),
            ),
          ),
          env: Type.Record(Type.String(), Type.String()),
          volumes: Type.Array(
            Type.Object({
              id: Type.String(),
              name: Type.String(),
              mount_path: Type.String(),
              size_gb: Type.Integer(),
            }),
          ),
          hostname: Type.String({
            description:
              "The frame's own hostname (CONTRACT 5b): `<label>-<6 chars>.<APPS_DOMAIN>`",
          }),
          suspended: Type.Boolean({
            description: "Stopped for its payer's billing (the edge says so), not by its owner",
          }),
          domains: Type.Array(Type.String(), {
            description: 'Hostnames to route to the frame: verified custom domains only',
          }),
          certificates: Type.Array(
            Type.Object({ hostname: Type.String(), fingerprint: Type.String() }),
            {
              description:
                'The certificates issued for its hostname and domains: fetch one from ' +
                '/v2/agent/certificates/<hostname> when its fingerprint is not the one held',
            },
          ),
        }),
        { description: 'The whole desired state; absent only when `unchanged`' },
      ),
    ),
    sync_after_ms: Type.Integer(),
  },
  { title: 'SyncAnswer' },
);
