-- Releases, continued (issue 36). A deployment records the settings it started with and the
-- image it ran, so that
-- a release can say what changed against the one before it (env and git settings it already
-- froze). A config release (trigger `config`) runs the serving build with the frame's env and
-- settings as saved now. A rollback pauses the frame's push deploys until someone resumes them
-- (as Render), so that the next push does not undo it: `push_deploys_paused_at` says since
-- when, `push_deploys_paused_by` by which rollback (null: paused by hand).
ALTER TABLE deployments DROP CONSTRAINT deployments_trigger_check;
ALTER TABLE deployments ADD CONSTRAINT deployments_trigger_check
  CHECK (trigger IN ('create', 'manual', 'push', 'reroll', 'rollback', 'restart', 'config'));
ALTER TABLE deployments ADD COLUMN settings jsonb;
-- The image a release runs, as its agent reported it (docker, swarm); null on the process
-- runtime, whose build is a directory the agent keeps, and before the agent says.
ALTER TABLE deployments ADD COLUMN image text;
ALTER TABLE frames ADD COLUMN push_deploys_paused_at timestamptz;
ALTER TABLE frames ADD COLUMN push_deploys_paused_by text;
