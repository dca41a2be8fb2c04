-- Member lists are remembered per team version (src/teams/member-pages.ts). Every change that
-- shows in a team's member list moves the version in the same transaction: a member row added,
-- removed or given another role, or a member's name or e-mail changed.
ALTER TABLE teams ADD COLUMN members_version bigint NOT NULL DEFAULT 0;

-- team_member_count now keeps both figures of the team row.
CREATE OR REPLACE FUNCTION team_member_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE teams SET member_count = member_count + 1, members_version = members_version + 1 WHERE id = NEW.team_id;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE teams SET member_count = member_count - 1, members_version = members_version + 1 WHERE id = OLD.team_id;
  ELSE
    UPDATE teams SET members_version = members_version + 1 WHERE id IN (OLD.team_id, NEW.team_id);
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER team_member_count ON team_members;
CREATE TRIGGER team_member_count AFTER INSERT OR UPDATE OR DELETE ON team_members
  FOR EACH ROW EXECUTE FUNCTION team_member_count();

CREATE FUNCTION user_shown_in_teams() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE teams SET members_version = members_version + 1
    WHERE id IN (SELECT team_id FROM team_members WHERE user_id = NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER user_shown_in_teams AFTER UPDATE OF email, name ON users
  FOR EACH ROW WHEN (OLD.email IS DISTINCT FROM NEW.email OR OLD.name IS DISTINCT FROM NEW.name)
  EXECUTE FUNCTION user_shown_in_teams();
