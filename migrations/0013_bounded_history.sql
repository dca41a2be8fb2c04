-- Bounded growth (issue 12, item 6). Rate-limit counters (src/http/rate-limit.ts) are keyed by
-- account and IP, so their rows would pile up forever: each now says when its window ends, and
-- the minute sweep (src/jobs/sweeper.ts) deletes the rows whose window has ended. A row read
-- after its window ended counts as a fresh window anyway, so deleting it changes no answer.
ALTER TABLE rate_limits ADD COLUMN expires_at timestamptz;
-- Rows from before this migration do not know their window; every window in use is an hour or
-- less by default, so a day errs on the side of keeping them.
UPDATE rate_limits SET expires_at = window_start + interval '1 day';
-- The default serves an instance of the previous version still running during a rolling
-- upgrade; this version always writes the column itself, from the service clock.
ALTER TABLE rate_limits ALTER COLUMN expires_at SET DEFAULT now() + interval '1 day';
ALTER TABLE rate_limits ALTER COLUMN expires_at SET NOT NULL;
CREATE INDEX rate_limits_expires_at ON rate_limits (expires_at);
