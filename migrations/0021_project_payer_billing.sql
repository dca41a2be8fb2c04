-- Each project holds a copy of its payer's billing status (CONTRACT 3a: the user who owns it, or
-- the organization that does), kept by the database, so that a frame read, a stop or start and
-- an agent's desired state read it from the project row instead of probing users or teams.
-- Measured with pgbench on the bench's large dataset, the cold frame read (frames-dal.ts) took
-- 8 µs less without that probe, of about 90 µs in the server.
ALTER TABLE projects ADD COLUMN payer_billing text NOT NULL DEFAULT 'active'
  CHECK (payer_billing IN ('active', 'past_due'));
-- The copy is the payer's, whatever an INSERT or UPDATE says. The payer's row is locked FOR
-- SHARE, as a billing change locks it FOR NO KEY UPDATE: a change that committed after this
-- statement began would otherwise leave the copy old (its UPDATE below cannot see a project
-- not yet committed, or not yet its payer's), and one still running makes this wait for it.
CREATE FUNCTION project_payer_billing() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.org_id IS NOT NULL THEN
    SELECT o.billing_status INTO NEW.payer_billing FROM teams o WHERE o.id = NEW.org_id FOR SHARE;
  ELSE
    SELECT u.billing_status INTO NEW.payer_billing FROM users u WHERE u.id = NEW.owner_id
      FOR SHARE;
  END IF;
  -- No such payer: the foreign key (or projects_org_kind) reports it, not a null status.
  NEW.payer_billing := coalesce(NEW.payer_billing, 'active');
  RETURN NEW;
END $$;
CREATE TRIGGER projects_payer_billing BEFORE INSERT OR UPDATE OF owner_id, org_id, payer_billing
  ON projects FOR EACH ROW EXECUTE FUNCTION project_payer_billing();
-- The projects that exist get their copy from the trigger, as new ones do.
UPDATE projects SET payer_billing = payer_billing;

-- A payer's new status reaches every project it pays for. A billing change locks a user's
-- projects before the user, as a transfer does (admin/billing-service.ts); an org's after the
-- org, as bump_org_projects (0015) and a transfer do.
CREATE FUNCTION payer_billing_to_projects() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'users' THEN
    UPDATE projects SET payer_billing = NEW.billing_status WHERE owner_id = NEW.id;
  ELSE
    UPDATE projects SET payer_billing = NEW.billing_status WHERE org_id = NEW.id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER users_payer_billing AFTER UPDATE OF billing_status ON users
  FOR EACH ROW WHEN (OLD.billing_status IS DISTINCT FROM NEW.billing_status)
  EXECUTE FUNCTION payer_billing_to_projects();
CREATE TRIGGER teams_payer_billing AFTER UPDATE OF billing_status ON teams
  FOR EACH ROW WHEN (OLD.billing_status IS DISTINCT FROM NEW.billing_status)
  EXECUTE FUNCTION payer_billing_to_projects();
