-- Every instance holds the ids of the revoked tokens still unexpired in memory
-- (src/identity/revocations.ts), loaded when its LISTEN connection comes up and every hour:
-- this index is that load, whatever the number of tokens that were never revoked.
CREATE INDEX access_tokens_revoked ON access_tokens (expires_at) INCLUDE (id)
  WHERE revoked_at IS NOT NULL;
