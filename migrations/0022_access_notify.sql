-- Who may reach a project is told to every instance when it changes, as a revoked token is
-- (frameplane_tokens): open event streams re-check their reader's access at once rather than at
-- their periodic re-check (src/access/access-changes.ts). The versions of 0004 move with every
-- such change, whatever made it (a grant, a membership, an org's base role, a new owner), so
-- the database tells it here instead of each path remembering to. A deleted project moves no
-- version: its deletion is told too. NOTIFY is delivered on commit and a repeated payload is
-- sent once per transaction, so a cascade tells each user or project once.
CREATE FUNCTION notify_access_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('frameplane_access', TG_ARGV[0] || ':' || OLD.id);
  RETURN NULL;
END $$;

CREATE TRIGGER users_access_notify AFTER UPDATE ON users
  FOR EACH ROW WHEN (OLD.access_version IS DISTINCT FROM NEW.access_version)
  EXECUTE FUNCTION notify_access_change('user');
CREATE TRIGGER projects_access_notify AFTER UPDATE ON projects
  FOR EACH ROW WHEN (OLD.access_version IS DISTINCT FROM NEW.access_version)
  EXECUTE FUNCTION notify_access_change('project');
CREATE TRIGGER projects_deleted_notify AFTER DELETE ON projects
  FOR EACH ROW EXECUTE FUNCTION notify_access_change('project');
