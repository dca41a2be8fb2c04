-- A frame's newest event id, on the frame's row. Event ids are the positions of event streams,
-- so a new one must sort after every committed one of its frame: a writer reads this column
-- under the frame's row lock. Being on the row, it is current even for a reader that waited for
-- the lock (PostgreSQL re-reads a locked row, not a subquery), and every event moves the row: a
-- write that checks the row is unchanged since it read it (stop/start) also knows that no event
-- came in between.
--
-- The statements that insert events set it themselves (history-dal insertFrameEvent,
-- frame-ops-dal writeOperation), in the same statement. A trigger on frame_events would keep it
-- for any insert, but measured on the stop's statement it doubled its execution time (0.16 ms
-- against 0.32 ms with a statement-level trigger, 0.58 ms with a row-level one);
-- test/frames/concurrency.test.ts checks the column against the events.
ALTER TABLE frames ADD COLUMN last_event_id text;
UPDATE frames f SET last_event_id = (SELECT max(id) FROM frame_events e WHERE e.frame_id = f.id);
