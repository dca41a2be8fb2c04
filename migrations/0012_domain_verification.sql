-- Domain ownership (issue 12, item 7). A POST of a hostname is now a claim: it holds a random
-- token that its owner publishes as a DNS TXT record, and only a verified claim is attached to
-- its frame. "A hostname is attached to one frame in the whole service" becomes: at most one
-- VERIFIED claim per hostname (the partial unique index keeps the old name, so the error mapping
-- in src/http/pg-errors.ts still answers 409 domain_taken). Pending claims of several frames may
-- coexist, so a squatter's claim blocks nobody; when one verifies, the others are deleted.
ALTER TABLE domains
  ADD COLUMN verification_token text,
  ADD COLUMN verified_at timestamptz;

-- Claims made before verification existed proved nothing: they become pending, each with a
-- token of its own (gen_random_uuid: 122 random bits, written as 32 hex digits like new tokens).
UPDATE domains SET verification_token = replace(gen_random_uuid()::text, '-', '');

ALTER TABLE domains
  ALTER COLUMN verification_token SET NOT NULL,
  ADD CONSTRAINT domains_token_format CHECK (verification_token ~ '^[0-9a-f]{32}$');

DROP INDEX domains_hostname_key;
CREATE UNIQUE INDEX domains_hostname_key ON domains (hostname) WHERE verified_at IS NOT NULL;
-- One claim per frame and hostname; and the index that finds every claim of a hostname.
CREATE UNIQUE INDEX domains_frame_hostname_key ON domains (frame_id, hostname);
CREATE INDEX domains_hostname ON domains (hostname);
