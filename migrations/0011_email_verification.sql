-- Proof of e-mail ownership (issue 12, item 2). An account holds its address from sign-up, but
-- only a verified account (one whose owner proved the mailbox) sees invitations to it, keeps it
-- against a new sign-up, and counts as "email_taken". users_email_key still allows one account
-- per address, whatever its state.
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;

-- An account that accepted an invitation e-mailed to its own address proved the mailbox then.
UPDATE users u SET email_verified_at = proof.first_accepted
FROM (
  SELECT accepted_by, email, min(accepted_at) AS first_accepted
  FROM invitations WHERE accepted_by IS NOT NULL GROUP BY accepted_by, email
) proof
WHERE proof.accepted_by = u.id AND proof.email = u.email;

-- One row per verification link. The token lives only in the e-mail; this keeps its SHA-256.
-- A row is either an account asking to prove its address (user_id set), or a sign-up waiting
-- for proof before the account exists (password_hash and name set, user_id null until used;
-- then user_id names the account it became and the password hash is dropped).
CREATE TABLE email_verifications (
  id bigserial PRIMARY KEY,
  email text NOT NULL CHECK (email = lower(email)),
  user_id text REFERENCES users ON DELETE CASCADE,
  password_hash text,
  name text,
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  CHECK (user_id IS NOT NULL OR password_hash IS NOT NULL),
  CHECK (password_hash IS NULL OR user_id IS NULL)
);
CREATE INDEX email_verifications_email ON email_verifications (email, expires_at);
