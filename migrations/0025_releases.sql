-- Releases (issue 36): a deployment is a release, and a new one may run an earlier one's build
-- instead of building its commit again: a rollback (to that release) or a restart (of the one
-- serving). `release_of` names the deployment whose build it runs; the agent reuses that
-- build while it keeps it (RELEASES_KEPT), and builds the same commit otherwise. No foreign key:
-- history is pruned (DEPLOYMENT_HISTORY) and the agent's build outlives its row.
ALTER TABLE deployments DROP CONSTRAINT deployments_trigger_check;
ALTER TABLE deployments ADD CONSTRAINT deployments_trigger_check
  CHECK (trigger IN ('create', 'manual', 'push', 'reroll', 'rollback', 'restart'));
ALTER TABLE deployments ADD COLUMN release_of text;
