-- Truthful status for containerised frames (CONTRACT 5): why a replica failed and which release
-- it runs, why a deployment failed, the health check path the agent probes, and the release the
-- healthy replicas serve (kept on the frame row by the triggers of 0005, like the other summaries).

-- A replica's reason replaces the pull_failed flag: one of the error reasons, or start_timeout
-- (no health check answered in time; shown as health_check_failed).
ALTER TABLE frame_replicas ADD COLUMN reason text CHECK (reason IN (
  'crash', 'oom', 'health_check_failed', 'image_pull_failed', 'port_in_use', 'build_failed', 'start_timeout'));
-- The deployment whose release the replica runs: during a rollout the old release's replicas are
-- reported under the new generation, and must not count for the new deployment. No foreign key:
-- deployments go only with their frame, and the sync writes these rows on every report.
ALTER TABLE frame_replicas ADD COLUMN deployment_id text;
UPDATE frame_replicas SET reason = 'image_pull_failed' WHERE pull_failed;
ALTER TABLE frame_replicas DROP COLUMN pull_failed;

ALTER TABLE deployments ADD COLUMN failure_reason text CHECK (failure_reason IN (
  'crash', 'oom', 'health_check_failed', 'image_pull_failed', 'port_in_use', 'build_failed', 'backoff_tripped'));
ALTER TABLE deployments ADD COLUMN failure_message text CHECK (char_length(failure_message) <= 2000);

-- What the agent probes; no whitespace or control characters, so it goes into a request line as is.
ALTER TABLE frames ADD COLUMN health_check_path text NOT NULL DEFAULT '/'
  CHECK (health_check_path ~ '^/[^[:space:][:cntrl:]]*$' AND char_length(health_check_path) <= 200);
-- {id, commit_sha} of the newest deployment that a healthy replica runs, or null.
ALTER TABLE frames ADD COLUMN serving_deployment jsonb;

CREATE OR REPLACE FUNCTION frame_replicas_json(frame text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT coalesce(jsonb_agg(jsonb_build_object('replica', r.replica, 'generation', r.generation, 'state', r.state,
    'reason', r.reason, 'deployment_id', r.deployment_id, 'since', utc_text(r.since)) ORDER BY r.replica), '[]')
  FROM frame_replicas r WHERE r.frame_id = frame
$$;

CREATE OR REPLACE FUNCTION frame_latest_deployment_json(frame text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', d.id, 'status', d.status, 'generation', d.generation, 'trigger', d.trigger,
    'git_repository', d.git_repository, 'git_repository_owner', d.git_repository_owner,
    'git_repository_branch', d.git_repository_branch, 'env_digest', d.env_digest, 'commit_sha', d.commit_sha,
    'failure_reason', d.failure_reason, 'failure_message', d.failure_message, 'created_at', utc_text(d.created_at))
  FROM deployments d WHERE d.frame_id = frame ORDER BY d.id DESC LIMIT 1
$$;

-- A replica reported without a deployment id (an older agent) runs the newest deployment of its
-- generation or before: such events are taken as current (CONTRACT 6).
CREATE FUNCTION frame_serving_json(frame text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('id', d.id, 'commit_sha', d.commit_sha)
  FROM deployments d
  WHERE d.frame_id = frame AND d.id IN (
    SELECT coalesce(r.deployment_id, (SELECT o.id FROM deployments o WHERE o.frame_id = frame AND o.generation <= r.generation
      ORDER BY o.id DESC LIMIT 1))
    FROM frame_replicas r WHERE r.frame_id = frame AND r.state = 'healthy')
  ORDER BY d.id DESC LIMIT 1
$$;

CREATE OR REPLACE FUNCTION frame_facts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids text[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    ids := array(SELECT frame_id FROM changed UNION SELECT frame_id FROM was);
  ELSE
    ids := array(SELECT DISTINCT frame_id FROM changed);
  END IF;
  PERFORM 1 FROM frames WHERE id = ANY(ids) ORDER BY id FOR NO KEY UPDATE;
  UPDATE frames SET replicas = frame_replicas_json(id), latest_deployment = frame_latest_deployment_json(id),
    serving_deployment = frame_serving_json(id) WHERE id = ANY(ids);
  RETURN NULL;
END $$;

UPDATE frames SET replicas = frame_replicas_json(id), latest_deployment = frame_latest_deployment_json(id),
  serving_deployment = frame_serving_json(id);
