-- The edges' certificates (CONTRACT 5b): one per hostname that an edge with TLS serves (a
-- frame's own hostname, a verified domain), issued by the ACME server of ACME_DIRECTORY_URL
-- (src/certificates/). Stored here so that every edge and every restart shares them; the
-- private key sealed with the service's secret key, as env values are.
CREATE TABLE edge_certificates (
  hostname text PRIMARY KEY CHECK (hostname = lower(hostname) AND length(hostname) <= 253),
  -- The chain, leaf first (PEM), and its key; both null until the first issue succeeds.
  certificate text,
  private_key_sealed text,
  -- SHA-256 of the leaf (hex): how agents tell a renewed certificate from the one they hold.
  fingerprint text,
  not_before timestamptz,
  not_after timestamptz,
  -- The next attempt may start at this time: the renewal time once issued, or the end of the
  -- back-off after a failure (src/certificates/renewal.ts).
  attempt_at timestamptz NOT NULL,
  -- Failed attempts since the last success; the back-off grows with them.
  failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  last_error text,
  -- An issuer holds this name until then: one order per name at a time, across instances.
  leased_until timestamptz,
  CHECK ((certificate IS NULL) = (private_key_sealed IS NULL)),
  CHECK ((certificate IS NULL) = (fingerprint IS NULL)),
  CHECK ((certificate IS NULL) = (not_after IS NULL))
);
CREATE INDEX edge_certificates_attempt_at ON edge_certificates (attempt_at);

-- The ACME account of each directory the service has used: its key, sealed, and its URL.
CREATE TABLE acme_accounts (
  directory_url text PRIMARY KEY,
  account_key_sealed text NOT NULL,
  account_url text,
  created_at timestamptz NOT NULL
);

-- HTTP-01 challenges in progress: an edge asked for /.well-known/acme-challenge/<token> of a
-- host it serves answers the key authorization (src/agent-api/agents-routes.ts).
CREATE TABLE acme_challenges (
  token text PRIMARY KEY CHECK (token ~ '^[A-Za-z0-9_-]+$' AND length(token) <= 256),
  hostname text NOT NULL,
  key_authorization text NOT NULL,
  created_at timestamptz NOT NULL
);
