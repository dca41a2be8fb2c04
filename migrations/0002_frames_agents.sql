-- Frames, their runtime (agents, replicas, deployments), settings (env, domains, volumes),
-- history (events, logs), git webhooks and idempotent POSTs.

CREATE TABLE agents (
  id text PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('cloud', 'self_hosted')),
  project_id text REFERENCES projects ON DELETE CASCADE,
  name text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz,
  CHECK ((kind = 'cloud') = (project_id IS NULL))
);
CREATE INDEX agents_project ON agents (project_id, id);

CREATE TABLE frames (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
  space_id text NOT NULL REFERENCES spaces,  -- NO ACTION: a space with frames cannot be deleted alone
  owner_id text NOT NULL REFERENCES users,
  name text NOT NULL,
  git_repository text NOT NULL,
  git_repository_owner text NOT NULL,
  git_repository_branch text NOT NULL,
  port integer NOT NULL CHECK (port BETWEEN 1024 AND 65535 AND port NOT IN (6379, 27017, 9898, 27018)),
  replica_count integer NOT NULL DEFAULT 1 CHECK (replica_count BETWEEN 1 AND 100),
  runtime_kind text NOT NULL CHECK (runtime_kind IN ('cloud', 'agent')),
  -- Where it runs: a self-hosted agent chosen at creation, or the cloud agent it was placed on
  -- (null while no cloud agent exists).
  agent_id text REFERENCES agents,
  desired_state text NOT NULL DEFAULT 'running' CHECK (desired_state IN ('running', 'stopped')),
  -- Bumped whenever what the agent must run changes; events of older generations are history.
  generation integer NOT NULL DEFAULT 1,
  -- Bumped on every settings change; the ETag of the frame.
  version integer NOT NULL DEFAULT 1,
  -- Keyed digest of the env vars, compared with the deployment's to list pending changes.
  env_digest text NOT NULL DEFAULT '',
  crash_streak integer NOT NULL DEFAULT 0,
  backoff_tripped_at timestamptz,
  -- The last derived status, kept to record status-change events (never read as the truth).
  last_status text,
  last_status_reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((runtime_kind = 'agent') <= (agent_id IS NOT NULL))
);
CREATE INDEX frames_space ON frames (space_id, id);
CREATE INDEX frames_project ON frames (project_id, id);
CREATE INDEX frames_agent ON frames (agent_id);
CREATE INDEX frames_repository ON frames (git_repository_owner, git_repository, git_repository_branch);
CREATE INDEX frames_unplaced ON frames (id) WHERE runtime_kind = 'cloud' AND agent_id IS NULL;

CREATE TABLE frame_replicas (
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  replica integer NOT NULL CHECK (replica >= 0),
  generation integer NOT NULL,
  state text NOT NULL CHECK (state IN ('pulling', 'starting', 'healthy', 'unhealthy', 'crashed', 'oom', 'stopped')),
  pull_failed boolean NOT NULL DEFAULT false,
  since timestamptz NOT NULL,
  PRIMARY KEY (frame_id, replica)
);
CREATE INDEX frame_replicas_pulling ON frame_replicas (since) WHERE state = 'pulling';

CREATE TABLE deployments (
  id text PRIMARY KEY,
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  trigger text NOT NULL CHECK (trigger IN ('create', 'manual', 'push', 'reroll')),
  status text NOT NULL CHECK (status IN ('in_progress', 'succeeded', 'failed', 'superseded', 'canceled')),
  generation integer NOT NULL,
  -- What this deployment runs: git settings, env and commit as they were when it was made.
  git_repository text NOT NULL,
  git_repository_owner text NOT NULL,
  git_repository_branch text NOT NULL,
  commit_sha text,
  env_sealed text NOT NULL,
  env_digest text NOT NULL,
  created_by text REFERENCES users ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  finished_at timestamptz
);
CREATE INDEX deployments_frame ON deployments (frame_id, id DESC);
CREATE UNIQUE INDEX deployments_one_in_progress ON deployments (frame_id) WHERE status = 'in_progress';

CREATE TABLE frame_env (
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  key text NOT NULL,
  value_sealed text NOT NULL,
  PRIMARY KEY (frame_id, key)
);

CREATE TABLE domains (
  id text PRIMARY KEY,
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  hostname text NOT NULL CHECK (hostname = lower(hostname)),
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX domains_hostname_key ON domains (hostname);
CREATE INDEX domains_frame ON domains (frame_id, id);

CREATE TABLE volumes (
  id text PRIMARY KEY,
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  name text NOT NULL,
  mount_path text NOT NULL,
  size_gb integer NOT NULL CHECK (size_gb BETWEEN 1 AND 16384),
  created_at timestamptz NOT NULL,
  CONSTRAINT volumes_frame_name_key UNIQUE (frame_id, name),
  CONSTRAINT volumes_frame_mount_key UNIQUE (frame_id, mount_path)
);

CREATE TABLE frame_events (
  id text PRIMARY KEY,
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  type text NOT NULL,
  status text,
  status_reason text,
  detail jsonb,
  actor_id text,
  at timestamptz NOT NULL
);
CREATE INDEX frame_events_frame ON frame_events (frame_id, id);

CREATE TABLE frame_logs (
  id bigserial PRIMARY KEY,
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  replica integer NOT NULL,
  at timestamptz NOT NULL,
  line text NOT NULL
);
CREATE INDEX frame_logs_frame ON frame_logs (frame_id, id);

CREATE TABLE project_webhooks (
  project_id text PRIMARY KEY REFERENCES projects ON DELETE CASCADE,
  secret_sealed text NOT NULL,
  rotated_at timestamptz NOT NULL
);

CREATE TABLE idempotency_keys (
  scope text NOT NULL,
  key text NOT NULL,
  request_hash text NOT NULL,
  status integer,
  headers jsonb,
  body text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
