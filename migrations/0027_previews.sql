-- Preview frames (issue 36). A frame may opt in (`previews_enabled`): then a signed push to
-- another branch of its repository, or a pull request against its branch, makes or updates a
-- preview, a frame of its own in the same space (its own hostname, never the parent's custom
-- domains) with the parent's settings and env plus the parent's preview overrides (sealed
-- JSON, `previews_env_sealed`; their names in `previews_env_keys`, so that reading a frame
-- never opens a seal). A preview is gone when its branch is deleted or its pull request
-- closed, or at `preview_expires_at`: its last push plus the parent's `previews_ttl_days`,
-- kept in the row so that the sweeper's query and the frame's view read one column.
ALTER TABLE frames ADD COLUMN previews_enabled boolean NOT NULL DEFAULT false;
ALTER TABLE frames ADD COLUMN previews_ttl_days integer NOT NULL DEFAULT 7
  CHECK (previews_ttl_days BETWEEN 1 AND 90);
ALTER TABLE frames ADD COLUMN previews_env_sealed text;
ALTER TABLE frames ADD COLUMN previews_env_keys text[] NOT NULL DEFAULT '{}';
-- A parent's deletion takes its previews with it.
ALTER TABLE frames ADD COLUMN preview_of text REFERENCES frames (id) ON DELETE CASCADE;
ALTER TABLE frames ADD COLUMN preview_branch text;
ALTER TABLE frames ADD COLUMN preview_pull_request integer;
ALTER TABLE frames ADD COLUMN preview_pushed_at timestamptz;
ALTER TABLE frames ADD COLUMN preview_expires_at timestamptz;
ALTER TABLE frames ADD CONSTRAINT frames_preview_shape CHECK (
  (preview_of IS NULL) = (preview_branch IS NULL)
  AND (preview_of IS NULL) = (preview_pushed_at IS NULL)
  AND (preview_of IS NULL) = (preview_expires_at IS NULL)
  -- A preview has no previews of its own.
  AND (preview_of IS NULL OR NOT previews_enabled)
);
-- One preview per parent and branch, whoever makes it first.
CREATE UNIQUE INDEX frames_one_preview_per_branch ON frames (preview_of, preview_branch)
  WHERE preview_of IS NOT NULL;
CREATE INDEX frames_preview_expiry ON frames (preview_expires_at)
  WHERE preview_expires_at IS NOT NULL;
