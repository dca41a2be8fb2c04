-- Organizations (CONTRACT 3a): an account that owns projects and pays for them, with owner,
-- admin and member roles and a base_role that every member holds on every project it owns.
--
-- An organization is a row of `teams` of kind 'org'. It shares what a team already has and
-- keeps true in the database: one slug namespace (teams_slug_key), exactly one owner who is
-- teams.owner_id (team_members_guard, teams_have_owner), member counts and member-list
-- versions, e-mail invitations (one mechanism, two kinds of membership), and the role memo's
-- exactness: a membership change already moves users.access_version (0004).
ALTER TABLE teams
  ADD COLUMN kind text NOT NULL DEFAULT 'team' CHECK (kind IN ('team', 'org')),
  ADD COLUMN base_role text CHECK (base_role IN ('none', 'viewer', 'member', 'admin')),
  ADD COLUMN billing_status text CHECK (billing_status IN ('active', 'past_due')),
  ADD CONSTRAINT teams_org_columns CHECK (
    (kind = 'org') = (base_role IS NOT NULL) AND (kind = 'org') = (billing_status IS NOT NULL));
CREATE INDEX teams_kind ON teams (kind, id);

-- An org's roles are owner, admin and member: no viewer, in a membership or an invitation.
CREATE FUNCTION org_role_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.role = 'viewer' AND EXISTS (SELECT 1 FROM teams WHERE id = NEW.team_id AND kind = 'org') THEN
    RAISE EXCEPTION 'an organization has no viewer role' USING ERRCODE = 'P0001', HINT = 'org_role';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER team_members_org_role BEFORE INSERT OR UPDATE OF role ON team_members
  FOR EACH ROW EXECUTE FUNCTION org_role_guard();
CREATE TRIGGER invitations_org_role BEFORE INSERT OR UPDATE OF role ON invitations
  FOR EACH ROW EXECUTE FUNCTION org_role_guard();

-- Projects are shared with teams, not with organizations.
CREATE FUNCTION grants_to_teams_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM teams WHERE id = NEW.team_id AND kind = 'org') THEN
    RAISE EXCEPTION 'a grant names a team, not an organization' USING ERRCODE = 'P0001', HINT = 'grant_to_org';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER grants_to_teams_only BEFORE INSERT OR UPDATE OF team_id ON grants
  FOR EACH ROW EXECUTE FUNCTION grants_to_teams_only();

-- A project is owned by a user (owner_id) or by an organization (org_id), never both. An org
-- that owns a project cannot be deleted (RESTRICT): 409 org_not_empty comes from here too.
ALTER TABLE projects
  ALTER COLUMN owner_id DROP NOT NULL,
  ADD COLUMN org_id text REFERENCES teams ON DELETE RESTRICT,
  ADD CONSTRAINT projects_one_owner CHECK ((owner_id IS NULL) <> (org_id IS NULL));
CREATE INDEX projects_org ON projects (org_id, id) WHERE org_id IS NOT NULL;

CREATE FUNCTION projects_org_kind() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.org_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM teams WHERE id = NEW.org_id AND kind = 'org') THEN
    RAISE EXCEPTION 'a project is owned by a user or an organization, not a team'
      USING ERRCODE = 'P0001', HINT = 'owner_not_org';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER projects_org_kind BEFORE INSERT OR UPDATE OF org_id ON projects
  FOR EACH ROW EXECUTE FUNCTION projects_org_kind();

-- The role memo (0004): a new owner of either kind moves the project's version, and so does a
-- change of the base_role of the org that owns it (its members' role on the project changes).
DROP TRIGGER projects_owner_access ON projects;
CREATE TRIGGER projects_owner_access BEFORE UPDATE OF owner_id, org_id ON projects
  FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id OR OLD.org_id IS DISTINCT FROM NEW.org_id)
  EXECUTE FUNCTION bump_project_owner();

CREATE FUNCTION bump_org_projects() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM projects WHERE org_id = NEW.id ORDER BY id FOR NO KEY UPDATE;
  UPDATE projects SET access_version = access_version + 1 WHERE org_id = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER teams_base_role_access AFTER UPDATE OF base_role ON teams
  FOR EACH ROW WHEN (OLD.base_role IS DISTINCT FROM NEW.base_role)
  EXECUTE FUNCTION bump_org_projects();

-- Ownership transfer (CONTRACT 7) is the operator's, and the only way an owner changes. The
-- guards of 0001 keep refusing every other change; the transfer's transaction says what it is
-- with set_config('frameplane.owner_transfer', 'on', true) (local to that transaction), and
-- teams_have_owner still checks, at commit, that exactly one owner row is teams.owner_id.
CREATE OR REPLACE FUNCTION team_members_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE transfer boolean := coalesce(current_setting('frameplane.owner_transfer', true), '') = 'on';
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF (NEW.role = 'owner') <> EXISTS (SELECT 1 FROM teams WHERE id = NEW.team_id AND owner_id = NEW.user_id) THEN
      RAISE EXCEPTION 'the team owner is fixed' USING ERRCODE = 'P0001', HINT = 'owner_immutable';
    END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF (OLD.role = 'owner' OR NEW.role = 'owner')
       AND (NEW.role, NEW.user_id, NEW.team_id) IS DISTINCT FROM (OLD.role, OLD.user_id, OLD.team_id)
       AND NOT (transfer AND (NEW.user_id, NEW.team_id) = (OLD.user_id, OLD.team_id)) THEN
      RAISE EXCEPTION 'the team owner is fixed' USING ERRCODE = 'P0001', HINT = 'owner_immutable';
    END IF;
    RETURN NEW;
  END IF;
  -- DELETE: allowed for the owner only when the team itself is being deleted (cascade).
  IF OLD.role = 'owner' AND EXISTS (SELECT 1 FROM teams WHERE id = OLD.team_id) THEN
    RAISE EXCEPTION 'the team owner cannot be removed' USING ERRCODE = 'P0001', HINT = 'owner_immutable';
  END IF;
  RETURN OLD;
END $$;

CREATE OR REPLACE FUNCTION teams_owner_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.owner_id IS DISTINCT FROM OLD.owner_id
     AND coalesce(current_setting('frameplane.owner_transfer', true), '') <> 'on' THEN
    RAISE EXCEPTION 'the team owner is fixed' USING ERRCODE = 'P0001', HINT = 'owner_immutable';
  END IF;
  RETURN NEW;
END $$;
