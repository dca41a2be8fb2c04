-- Identity, projects and spaces, teams and sharing, audit, mail outbox, rate limits, clock.
-- Invariants live here: unique e-mails, slugs and grants, one owner per team, an owner that
-- cannot be demoted or removed, no invitation or grant with role owner.

-- Declaration order is the role order, so least()/max() compute effective roles directly.
CREATE TYPE team_role AS ENUM ('viewer', 'member', 'admin', 'owner');

CREATE TABLE service_clock (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  offset_ms bigint NOT NULL DEFAULT 0
);
INSERT INTO service_clock DEFAULT VALUES;

CREATE TABLE users (
  id text PRIMARY KEY,
  email text NOT NULL CHECK (email = lower(email)),
  name text NOT NULL DEFAULT '',
  password_hash text NOT NULL,
  billing_status text NOT NULL DEFAULT 'active' CHECK (billing_status IN ('active', 'past_due')),
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (email);

CREATE TABLE access_tokens (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users ON DELETE CASCADE,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('session', 'personal')),
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX access_tokens_user ON access_tokens (user_id, id);

CREATE TABLE projects (
  id text PRIMARY KEY,
  owner_id text NOT NULL REFERENCES users ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX projects_owner ON projects (owner_id, id);

CREATE TABLE spaces (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (project_id, name)
);

CREATE TABLE teams (
  id text PRIMARY KEY,
  name text NOT NULL,
  slug text NOT NULL CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 63),
  owner_id text NOT NULL REFERENCES users,
  -- Kept by a trigger on team_members, so the team list does not count large teams per row.
  member_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX teams_slug_key ON teams (slug);

CREATE TABLE team_members (
  team_id text NOT NULL REFERENCES teams ON DELETE CASCADE,
  user_id text NOT NULL REFERENCES users ON DELETE CASCADE,
  role team_role NOT NULL,
  joined_at timestamptz NOT NULL,
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id, team_id);
-- The member list's order (join time), so a page of a large team is an index range scan.
CREATE INDEX team_members_joined ON team_members (team_id, joined_at, user_id);
-- At most one owner per team; the trigger below makes it exactly one.
CREATE UNIQUE INDEX team_members_one_owner ON team_members (team_id) WHERE role = 'owner';

-- The owner row is created with the team and leaves only with it: it cannot be demoted or
-- deleted, nobody else can become owner, and the owner is always teams.owner_id.
CREATE FUNCTION team_members_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF (NEW.role = 'owner') <> EXISTS (SELECT 1 FROM teams WHERE id = NEW.team_id AND owner_id = NEW.user_id) THEN
      RAISE EXCEPTION 'the team owner is fixed' USING ERRCODE = 'P0001', HINT = 'owner_immutable';
    END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    IF (OLD.role = 'owner' OR NEW.role = 'owner')
       AND (NEW.role, NEW.user_id, NEW.team_id) IS DISTINCT FROM (OLD.role, OLD.user_id, OLD.team_id) THEN
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
CREATE TRIGGER team_members_guard BEFORE INSERT OR UPDATE OR DELETE ON team_members
  FOR EACH ROW EXECUTE FUNCTION team_members_guard();

CREATE FUNCTION team_member_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE teams SET member_count = member_count + 1 WHERE id = NEW.team_id;
  ELSE
    UPDATE teams SET member_count = member_count - 1 WHERE id = OLD.team_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER team_member_count AFTER INSERT OR DELETE ON team_members
  FOR EACH ROW EXECUTE FUNCTION team_member_count();

-- The owner is teams.owner_id for the team's whole life.
CREATE FUNCTION teams_owner_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.owner_id IS DISTINCT FROM OLD.owner_id THEN
    RAISE EXCEPTION 'the team owner is fixed' USING ERRCODE = 'P0001', HINT = 'owner_immutable';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER teams_owner_fixed BEFORE UPDATE OF owner_id ON teams
  FOR EACH ROW EXECUTE FUNCTION teams_owner_fixed();

-- Every team has its owner row, for teams.owner_id, by the end of the transaction creating it.
CREATE FUNCTION teams_have_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM teams WHERE id = NEW.id)
     AND NOT EXISTS (SELECT 1 FROM team_members m JOIN teams t ON t.id = m.team_id
                     WHERE m.team_id = NEW.id AND m.role = 'owner' AND m.user_id = t.owner_id) THEN
    RAISE EXCEPTION 'a team needs exactly one owner, and it is teams.owner_id' USING ERRCODE = 'P0001', HINT = 'owner_immutable';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER teams_have_owner AFTER INSERT OR UPDATE ON teams
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION teams_have_owner();

CREATE TABLE invitations (
  id text PRIMARY KEY,
  team_id text NOT NULL REFERENCES teams ON DELETE CASCADE,
  email text NOT NULL CHECK (email = lower(email)),
  role team_role NOT NULL CHECK (role <> 'owner'),
  token_hash bytea NOT NULL UNIQUE,
  invited_by text REFERENCES users ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_by text REFERENCES users ON DELETE SET NULL,
  revoked_at timestamptz,
  declined_at timestamptz,
  -- Set when the invitation can no longer be used: accepted, revoked, declined, or an
  -- expired one replaced by a new invitation to the same address.
  closed_at timestamptz
);
CREATE INDEX invitations_team ON invitations (team_id, id);
CREATE INDEX invitations_email ON invitations (email) WHERE closed_at IS NULL;
-- One open invitation per address and team.
CREATE UNIQUE INDEX invitations_one_open ON invitations (team_id, email) WHERE closed_at IS NULL;

CREATE TABLE grants (
  id text PRIMARY KEY,
  team_id text NOT NULL REFERENCES teams ON DELETE CASCADE,
  project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
  role team_role NOT NULL CHECK (role <> 'owner'),
  created_by text REFERENCES users ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  CONSTRAINT grants_team_project_key UNIQUE (team_id, project_id)
);
CREATE INDEX grants_project ON grants (project_id, team_id);

-- Kept after the team is gone (no foreign keys): the history outlives what it describes.
CREATE TABLE audit_events (
  id text PRIMARY KEY,
  team_id text,
  project_id text,
  actor_id text,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text NOT NULL,
  before jsonb,
  after jsonb,
  request_id text,
  at timestamptz NOT NULL
);
CREATE INDEX audit_events_team ON audit_events (team_id, id) WHERE team_id IS NOT NULL;
CREATE INDEX audit_events_project ON audit_events (project_id, id) WHERE project_id IS NOT NULL;

-- The mail outbox: a row is written in the same transaction as what caused it, and a job
-- delivers it. Bodies are sealed (AES-256-GCM) because they carry invitation tokens.
CREATE TABLE emails (
  id text PRIMARY KEY,
  to_address text NOT NULL,
  subject text NOT NULL,
  sealed_text text NOT NULL,
  sealed_html text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'logged')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz
);
CREATE INDEX emails_pending ON emails (created_at) WHERE status = 'pending';

CREATE TABLE rate_limits (
  key text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  count integer NOT NULL
);
