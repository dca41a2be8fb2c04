-- Roles are remembered per (user, project) together with two versions (src/access/role-memo.ts).
-- A user's role on a project depends on nothing but the user's memberships and the project's
-- owner and grants; every change to those moves one of the versions in the same transaction:
--   users.access_version     a membership of the user added, removed or given another role
--   projects.access_version  a grant on the project added, removed or changed, or a new owner
-- A query sends the versions its remembered role was read at and evaluates the role subquery
-- only if either moved, in the same snapshot as the row it reads: never a stale role.
ALTER TABLE users ADD COLUMN access_version bigint NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN access_version bigint NOT NULL DEFAULT 0;

-- Statement-level, over transition tables: a bulk insert or a cascade (a team deleted with its
-- members and grants) moves each version once. An UPDATE trigger sees the rows before and after
-- (`was` and `changed`), should a key ever change in place. Rows are locked in id order first,
-- so that two statements touching overlapping sets cannot deadlock on each other.
CREATE FUNCTION bump_user_access() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids text[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    ids := array(SELECT user_id FROM changed UNION SELECT user_id FROM was);
  ELSE
    ids := array(SELECT DISTINCT user_id FROM changed);
  END IF;
  PERFORM 1 FROM users WHERE id = ANY(ids) ORDER BY id FOR NO KEY UPDATE;
  UPDATE users SET access_version = access_version + 1 WHERE id = ANY(ids);
  RETURN NULL;
END $$;

CREATE FUNCTION bump_project_access() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE ids text[];
BEGIN
  IF TG_OP = 'UPDATE' THEN
    ids := array(SELECT project_id FROM changed UNION SELECT project_id FROM was);
  ELSE
    ids := array(SELECT DISTINCT project_id FROM changed);
  END IF;
  PERFORM 1 FROM projects WHERE id = ANY(ids) ORDER BY id FOR NO KEY UPDATE;
  UPDATE projects SET access_version = access_version + 1 WHERE id = ANY(ids);
  RETURN NULL;
END $$;

CREATE TRIGGER team_members_access_insert AFTER INSERT ON team_members
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_user_access();
CREATE TRIGGER team_members_access_update AFTER UPDATE ON team_members
  REFERENCING OLD TABLE AS was NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_user_access();
CREATE TRIGGER team_members_access_delete AFTER DELETE ON team_members
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_user_access();

CREATE TRIGGER grants_access_insert AFTER INSERT ON grants
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_project_access();
CREATE TRIGGER grants_access_update AFTER UPDATE ON grants
  REFERENCING OLD TABLE AS was NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_project_access();
CREATE TRIGGER grants_access_delete AFTER DELETE ON grants
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION bump_project_access();

CREATE FUNCTION bump_project_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.access_version := OLD.access_version + 1;
  RETURN NEW;
END $$;
CREATE TRIGGER projects_owner_access BEFORE UPDATE OF owner_id ON projects
  FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id) EXECUTE FUNCTION bump_project_owner();
