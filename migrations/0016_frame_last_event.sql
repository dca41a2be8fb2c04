-- A frame's newest event id, on the frame's row. Event ids are the positions of event streams,
-- so a new one must sort after every committed one of its frame: a writer reads this column
-- under the frame's row lock. Being on the row, it is current even for a reader that waited for
-- the lock (PostgreSQL re-reads a locked row, not a subquery), and every event moves the row: a
-- write that checks the row is unchanged since it read it (stop/start) also knows that no event
-- came in between.
ALTER TABLE frames ADD COLUMN last_event_id text;
UPDATE frames f SET last_event_id = (SELECT max(id) FROM frame_events e WHERE e.frame_id = f.id);

-- Kept here rather than by each writer, so that no insert can forget it. Monotonic: a statement
-- that inserts several events of a frame, in any order, leaves the greatest (in byte order, as
-- ids.ts compares them).
CREATE FUNCTION frame_events_mark_newest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE frames SET last_event_id = NEW.id
   WHERE id = NEW.frame_id AND (last_event_id IS NULL OR last_event_id < NEW.id COLLATE "C");
  RETURN NULL;
END $$;
CREATE TRIGGER frame_events_mark_newest AFTER INSERT ON frame_events
  FOR EACH ROW EXECUTE FUNCTION frame_events_mark_newest();
