-- Every invitation e-mail queued (a new invitation or a resend), written in the transaction that
-- queues it, so that sends can be limited per team and per invited address over a sliding window
-- (issue 12, item 9). Rows older than the longest window are pruned as new ones are written.
-- No foreign keys: the log outlives a revoked invitation, and a deleted team simply stops sending.
CREATE TABLE invitation_emails (
  id bigserial PRIMARY KEY,
  team_id text NOT NULL,
  email text NOT NULL,
  invitation_id text NOT NULL,
  sent_at timestamptz NOT NULL
);
CREATE INDEX invitation_emails_team ON invitation_emails (team_id, sent_at);
CREATE INDEX invitation_emails_address ON invitation_emails (email, sent_at);
