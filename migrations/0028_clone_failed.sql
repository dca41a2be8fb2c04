-- A frame whose source could not be cloned (no such repository or branch, refused credentials,
-- the git host unreachable) says so: clone_failed, beside image_pull_failed, which it was shown
-- as until now. Rows already saying image_pull_failed stay: which of them were clones is not known.
ALTER TABLE frame_replicas DROP CONSTRAINT frame_replicas_reason_check;
ALTER TABLE frame_replicas ADD CONSTRAINT frame_replicas_reason_check CHECK (reason IN (
  'crash', 'oom', 'health_check_failed', 'image_pull_failed', 'clone_failed', 'port_in_use',
  'build_failed', 'start_timeout'));
ALTER TABLE deployments DROP CONSTRAINT deployments_failure_reason_check;
ALTER TABLE deployments ADD CONSTRAINT deployments_failure_reason_check CHECK (failure_reason IN (
  'crash', 'oom', 'health_check_failed', 'image_pull_failed', 'clone_failed', 'port_in_use',
  'build_failed', 'backoff_tripped'));
