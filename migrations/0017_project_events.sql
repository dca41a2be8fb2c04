-- A project's event stream (GET /v2/projects/{id}/events): the events of all its frames, in one
-- order that a single position can resume.
--
-- Event ids grow in commit order within one frame only (migrations/0016): two frames' writers
-- take different locks, so an event with a smaller id may commit after one with a larger id,
-- and a reader that resumes "after id X" across frames would skip it. So a project's stream is
-- ordered by the writing transaction's id (xid) and then the event id, and readers take only
-- rows whose transaction is older than every transaction still running
-- (pg_snapshot_xmin(pg_current_snapshot())): those rows are final, and every row that commits
-- later has a larger xid than them.
--
-- project_id and space_id are copied from the frame (a frame never changes project or space),
-- so that a project's events are one index range in that order; a space's are that range,
-- filtered (every event written pays for each index: one is enough for the console's views). The two statements
-- that insert events set them (history-dal insertFrameEvent, frame-ops-dal writeOperation);
-- xid comes from the default.
ALTER TABLE frame_events
  ADD COLUMN project_id text,
  ADD COLUMN space_id text,
  -- Rows from before this migration all get its transaction's id: they sort before any new row.
  ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
UPDATE frame_events e SET project_id = f.project_id, space_id = f.space_id
  FROM frames f WHERE f.id = e.frame_id;
ALTER TABLE frame_events ALTER COLUMN project_id SET NOT NULL;
ALTER TABLE frame_events ALTER COLUMN space_id SET NOT NULL;
CREATE INDEX frame_events_project ON frame_events (project_id, xid, id);
