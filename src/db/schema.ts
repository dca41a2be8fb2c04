// Row types of every table, for Kysely. Mirrors migrations/*.sql; test/db/schema-drift.test.ts
// holds it against the migrated database (tables, columns, nullability, kinds).
import type { ColumnType, Generated } from 'kysely';

export type Role = 'viewer' | 'member' | 'admin' | 'owner';
export type BaseRole = 'none' | 'viewer' | 'member' | 'admin';

/** frames.replicas: each replica as the agent last reported it (timestamps as RFC 3339 text, UTC). */
export interface ReplicaSummary {
  replica: number;
  generation: number;
  state: string;
  reason: string | null;
  deployment_id: string | null;
  since: string;
}
/** frames.latest_deployment: the newest deployment, as far as a frame's status and view need it. */
/** What a deployment records of the frame's settings as it starts. */
export interface ReleaseSettings {
  port: number;
  replica_count: number;
  health_check_path: string;
}

export interface DeploymentSummary {
  id: string;
  status: string;
  generation: number;
  trigger: string;
  git_repository: string;
  git_repository_owner: string;
  git_repository_branch: string;
  env_digest: string;
  commit_sha: string | null;
  failure_reason: DeploymentFailure | null;
  failure_message: string | null;
  created_at: string;
}
/** frames.serving_deployment: the newest deployment a healthy replica runs. */
export interface ServingSummary {
  id: string;
  commit_sha: string | null;
}
/** Where a log line came from: the app's replicas, the build, the edge. */
export type LogSource = 'app' | 'build' | 'edge';
export type DeploymentFailure =
  | 'crash'
  | 'oom'
  | 'health_check_failed'
  | 'image_pull_failed'
  | 'clone_failed'
  | 'port_in_use'
  | 'build_failed'
  | 'backoff_tripped';
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** frame_request_metrics' latency histogram: requests by bucket of LATENCY_BOUNDS_MS (0030). */
export type LatencyColumn = `latency_${
  | 0
  | 1
  | 2
  | 3
  | 4
  | 5
  | 6
  | 7
  | 8
  | 9
  | 10
  | 11
  | 12
  | 13
  | 14}`;
type LatencyColumns = { [C in LatencyColumn]: number };
type Json = ColumnType<unknown, string | null, string | null>;

export interface DB {
  service_clock: { id: Generated<boolean>; offset_ms: ColumnType<number, never, unknown> };
  users: {
    id: string;
    email: string;
    name: string;
    password_hash: string;
    billing_status: Generated<'active' | 'past_due'>;
    access_version: Generated<number>;
    created_at: Timestamp;
    email_verified_at: ColumnType<
      Date | null,
      Date | string | null | undefined,
      Date | string | null
    >;
  };
  access_tokens: {
    id: string;
    user_id: string;
    name: string;
    kind: 'session' | 'personal';
    token_hash: Buffer;
    created_at: Timestamp;
    expires_at: Timestamp | null;
    last_used_at: Timestamp | null;
    revoked_at: Timestamp | null;
  };
  projects: {
    id: string;
    /** The user who owns it, or null when an organization does (org_id). */
    owner_id: string | null;
    /** The organization that owns it (a teams row of kind 'org'), or null. */
    org_id: string | null;
    name: string;
    access_version: Generated<number>;
    created_at: Timestamp;
    /** A copy of the payer's billing status, kept by the database (migrations/0021). */
    payer_billing: Generated<'active' | 'past_due'>;
  };
  spaces: { id: string; project_id: string; name: string; created_at: Timestamp };
  teams: {
    id: string;
    name: string;
    slug: string;
    owner_id: string;
    member_count: Generated<number>;
    members_version: Generated<number>;
    created_at: Timestamp;
    /** 'org' for an organization (CONTRACT 3a), which shares the slugs and members of teams. */
    kind: Generated<'team' | 'org'>;
    /** An org's members' role on its projects; null for a team. */
    base_role: BaseRole | null;
    /** An org's billing (it pays for its projects); null for a team. */
    billing_status: 'active' | 'past_due' | null;
  };
  team_members: {
    team_id: string;
    user_id: string;
    role: Role;
    joined_at: Timestamp;
    /** The user's, copied by the database (migrations/0019): never written here. */
    email: ColumnType<string, never, never>;
    name: ColumnType<string, never, never>;
  };
  invitations: {
    id: string;
    team_id: string;
    email: string;
    role: Role;
    token_hash: Buffer;
    invited_by: string | null;
    created_at: Timestamp;
    expires_at: Timestamp;
    accepted_at: Timestamp | null;
    accepted_by: string | null;
    revoked_at: Timestamp | null;
    declined_at: Timestamp | null;
    closed_at: Timestamp | null;
  };
  grants: {
    id: string;
    team_id: string;
    project_id: string;
    role: Role;
    created_by: string | null;
    created_at: Timestamp;
  };
  audit_events: {
    id: string;
    team_id: string | null;
    project_id: string | null;
    actor_id: string | null;
    action: string;
    target_type: string;
    target_id: string;
    before: Json;
    after: Json;
    request_id: string | null;
    at: Timestamp;
  };
  emails: {
    id: string;
    to_address: string;
    subject: string;
    sealed_text: string;
    sealed_html: string;
    status: Generated<'pending' | 'sent' | 'logged'>;
    attempts: Generated<number>;
    last_error: string | null;
    created_at: Timestamp;
    delivered_at: Timestamp | null;
  };
  rate_limits: { key: string; window_start: Timestamp; count: number; expires_at: Timestamp };
  email_verifications: {
    id: Generated<number>;
    email: string;
    user_id: string | null;
    password_hash: string | null;
    name: string | null;
    token_hash: Buffer;
    created_at: Timestamp;
    expires_at: Timestamp;
    used_at: Timestamp | null;
  };
  invitation_emails: {
    id: Generated<number>;
    team_id: string;
    email: string;
    invitation_id: string;
    sent_at: Timestamp;
  };
  agents: {
    id: string;
    kind: 'cloud' | 'self_hosted';
    project_id: string | null;
    name: string;
    token_hash: Buffer;
    created_at: Timestamp;
    last_seen_at: Timestamp | null;
    // What the agent last said of its edge in a sync (migrations/0023).
    edge_http_port: number | null;
    edge_https_port: number | null;
    edge_reported: Generated<boolean>;
  };
  frames: {
    id: string;
    project_id: string;
    space_id: string;
    owner_id: string;
    name: string;
    // The frame's DNS label (migrations/0023): set at creation, never updated.
    hostname_label: ColumnType<string, string, never>;
    git_repository: string;
    git_repository_owner: string;
    git_repository_branch: string;
    port: number;
    replica_count: Generated<number>;
    runtime_kind: 'cloud' | 'agent';
    agent_id: string | null;
    desired_state: Generated<'running' | 'stopped'>;
    generation: Generated<number>;
    version: Generated<number>;
    env_digest: Generated<string>;
    crash_streak: Generated<number>;
    backoff_tripped_at: Timestamp | null;
    /** Push deploys paused since (by a rollback, or by hand), until resumed (migrations/0026). */
    push_deploys_paused_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    push_deploys_paused_by: ColumnType<string | null, string | null | undefined, string | null>;
    // Previews (migrations/0027): a parent's opt-in and overrides; a preview's parent and branch.
    previews_enabled: Generated<boolean>;
    previews_ttl_days: Generated<number>;
    previews_env_sealed: ColumnType<string | null, string | null | undefined, string | null>;
    previews_env_keys: ColumnType<string[], string[] | undefined, string[]>;
    preview_of: ColumnType<string | null, string | null | undefined, string | null>;
    preview_branch: ColumnType<string | null, string | null | undefined, string | null>;
    preview_pull_request: ColumnType<number | null, number | null | undefined, number | null>;
    preview_pushed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    preview_expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
    last_status: string | null;
    last_status_reason: string | null;
    health_check_path: Generated<string>;
    created_at: Timestamp;
    updated_at: Timestamp;
    // Kept by triggers (migrations/0005, 0006), never written by the service.
    replicas: ColumnType<ReplicaSummary[], never, never>;
    latest_deployment: ColumnType<DeploymentSummary | null, never, never>;
    serving_deployment: ColumnType<ServingSummary | null, never, never>;
    // The newest event's id (migrations/0016), set by each statement that inserts events.
    last_event_id: ColumnType<string | null, never, string>;
  };
  frame_replicas: {
    frame_id: string;
    replica: number;
    generation: number;
    state: string;
    reason: string | null;
    deployment_id: string | null;
    since: Timestamp;
  };
  deployments: {
    id: string;
    frame_id: string;
    trigger: 'create' | 'manual' | 'push' | 'reroll' | 'rollback' | 'restart' | 'config';
    status: 'in_progress' | 'succeeded' | 'failed' | 'superseded' | 'canceled';
    generation: number;
    /** The deployment whose build this one runs (a rollback, a restart); null: it builds. */
    release_of: ColumnType<string | null, string | null | undefined, string | null>;
    git_repository: string;
    git_repository_owner: string;
    git_repository_branch: string;
    commit_sha: string | null;
    env_sealed: string;
    env_digest: string;
    /** The settings it started with (migrations/0026); null: made before they were recorded. */
    settings: ColumnType<ReleaseSettings | null, string | null | undefined, string | null>;
    image: ColumnType<string | null, string | null | undefined, string | null>;
    created_by: string | null;
    created_at: Timestamp;
    finished_at: Timestamp | null;
    failure_reason: DeploymentFailure | null;
    failure_message: string | null;
  };
  frame_env: { frame_id: string; key: string; value_sealed: string };
  domains: {
    id: string;
    frame_id: string;
    hostname: string;
    created_at: Timestamp;
    verification_token: string;
    verified_at: Timestamp | null;
  };
  edge_certificates: {
    hostname: string;
    certificate: string | null;
    private_key_sealed: string | null;
    fingerprint: string | null;
    not_before: Timestamp | null;
    not_after: Timestamp | null;
    attempt_at: Timestamp;
    failures: Generated<number>;
    last_error: string | null;
    leased_until: Timestamp | null;
  };
  acme_accounts: {
    directory_url: string;
    account_key_sealed: string;
    account_url: string | null;
    created_at: Timestamp;
  };
  acme_challenges: {
    token: string;
    hostname: string;
    key_authorization: string;
    created_at: Timestamp;
  };
  volumes: {
    id: string;
    frame_id: string;
    name: string;
    mount_path: string;
    size_gb: number;
    created_at: Timestamp;
  };
  frame_events: {
    id: string;
    frame_id: string;
    type: string;
    status: string | null;
    status_reason: string | null;
    detail: Json;
    actor_id: string | null;
    at: Timestamp;
    /** The frame's (migrations/0017). */
    project_id: string;
    space_id: string;
    /** The writing transaction's id (xid8, as text): the order of a project's events. */
    xid: Generated<string>;
  };
  frame_logs: {
    id: Generated<number>;
    frame_id: string;
    replica: number;
    at: Timestamp;
    line: string;
    /** Where the line came from (migrations/0029). */
    source: Generated<LogSource>;
  };
  /** Bytes of each frame's lines, kept by triggers on frame_logs (migrations/0029). */
  frame_log_sizes: { frame_id: string; bytes: number };
  /** What each replica used, summed by minute and by hour of the service clock (0030). */
  frame_replica_metrics: {
    frame_id: string;
    resolution: number;
    at: Timestamp;
    replica: number;
    samples: number;
    seconds: number;
    cpu_seconds: number;
    memory_max_bytes: number | null;
    memory_limit_bytes: number | null;
    net_rx_bytes: number | null;
    net_tx_bytes: number | null;
    restarts: number;
  };
  /** What the edge answered for each frame, summed as frame_replica_metrics (0030). */
  frame_request_metrics: {
    frame_id: string;
    resolution: number;
    at: Timestamp;
    samples: number;
    seconds: number;
    status_1xx: number;
    status_2xx: number;
    status_3xx: number;
    status_4xx: number;
    status_5xx: number;
  } & LatencyColumns;
  project_webhooks: { project_id: string; secret_sealed: string; rotated_at: Timestamp };
  webhook_deliveries: {
    project_id: string;
    body_sha256: string;
    delivery_id: string | null;
    received_at: Timestamp;
    keep_until: Timestamp;
  };
  /** Outgoing notification webhooks of a project (migrations/0031, 0032). */
  notification_endpoints: {
    id: string;
    project_id: string;
    url: string;
    events: string[];
    format: 'json' | 'slack';
    secret_sealed: string;
    /** A rotated secret that goes on signing until it expires (migrations/0032). */
    previous_secret_sealed: string | null;
    previous_secret_expires_at: Timestamp | null;
    enabled: Generated<boolean>;
    disabled_reason: 'manual' | 'failing' | null;
    disabled_at: Timestamp | null;
    consecutive_failures: Generated<number>;
    failing_since: Timestamp | null;
    created_by: string | null;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  notification_deliveries: {
    id: string;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    body: Json;
    manual: boolean;
    redelivery_of: string | null;
    status: Generated<'pending' | 'succeeded' | 'failed'>;
    attempts: Generated<number>;
    next_attempt_at: Timestamp | null;
    last_error: string | null;
    created_at: Timestamp;
    finished_at: Timestamp | null;
  };
  notification_attempts: {
    delivery_id: string;
    attempt: number;
    at: Timestamp;
    ok: boolean;
    status_code: number | null;
    latency_ms: number;
    response_excerpt: string | null;
    error: string | null;
  };
  idempotency_keys: {
    scope: string;
    key: string;
    request_hash: string;
    status: number | null;
    headers: Json;
    body: string | null;
    created_at: Timestamp;
  };
}
