-- Logs that last (issue 39): a frame's lines can be searched, filtered by where they came from,
-- and are bounded by their bytes as well as their count and age.
--
-- pg_trgm ships with PostgreSQL's contrib (the embedded binaries and Debian's postgresql both
-- have it) and is a trusted extension: a database owner may create it without superuser.
-- Its GIN index serves `line ILIKE '%…%'` for any substring of three characters or more; the
-- planner ANDs it with frame_logs_frame, so a search of one frame reads only candidate lines.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX frame_logs_line_trgm ON frame_logs USING gin (line gin_trgm_ops);

-- Where a line came from: the app's replicas, the build (fetch, build output and the agent's
-- notes on a deployment), or the edge. Lines stored before this were all sent as the app's.
ALTER TABLE frame_logs ADD COLUMN source text NOT NULL DEFAULT 'app'
  CHECK (source IN ('app', 'build', 'edge'));

-- The bytes each frame's lines hold, kept by statement triggers so that the sweeper finds the
-- frames over LOG_RETENTION_BYTES_PER_FRAME without summing every frame's lines each minute.
-- Triggers rather than the DAL's statements: every writer and every delete (a frame's cascade
-- included) keeps it true. Rows are taken in frame order, so two statements cannot deadlock.
CREATE TABLE frame_log_sizes (
  frame_id text PRIMARY KEY REFERENCES frames ON DELETE CASCADE,
  bytes bigint NOT NULL
);
INSERT INTO frame_log_sizes (frame_id, bytes)
  SELECT frame_id, sum(octet_length(line)) FROM frame_logs GROUP BY frame_id;

CREATE FUNCTION frame_log_sizes_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO frame_log_sizes AS s (frame_id, bytes)
    SELECT frame_id, sum(octet_length(line)) FROM added GROUP BY frame_id ORDER BY frame_id
  ON CONFLICT (frame_id) DO UPDATE SET bytes = s.bytes + excluded.bytes;
  RETURN NULL;
END $$;

CREATE FUNCTION frame_log_sizes_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH gone AS (
    SELECT frame_id, sum(octet_length(line)) AS bytes FROM removed GROUP BY frame_id
  ), locked AS (
    SELECT s.frame_id FROM frame_log_sizes s JOIN gone g USING (frame_id)
    ORDER BY s.frame_id FOR UPDATE OF s
  )
  UPDATE frame_log_sizes s SET bytes = s.bytes - g.bytes
    FROM gone g, locked l WHERE s.frame_id = g.frame_id AND l.frame_id = g.frame_id;
  RETURN NULL;
END $$;

CREATE TRIGGER frame_log_sizes_add AFTER INSERT ON frame_logs
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION frame_log_sizes_add();
CREATE TRIGGER frame_log_sizes_remove AFTER DELETE ON frame_logs
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION frame_log_sizes_remove();
