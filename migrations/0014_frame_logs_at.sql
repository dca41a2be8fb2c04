-- The minute sweep (src/jobs/sweeper.ts) deletes log lines older than the retention by their
-- `at`. Without an index on it, that delete read the whole table every minute; with this one it
-- reads only the lines it deletes. Lines arrive with the agent's own time, so `at` does not
-- follow the id and the (frame_id, id) index cannot serve it.
CREATE INDEX frame_logs_at ON frame_logs (at);
