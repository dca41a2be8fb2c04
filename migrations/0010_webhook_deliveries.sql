-- Push deliveries already applied, per project (issue 12, item 10), so that a delivery sent
-- again (the git host's redelivery, or a captured one replayed) deploys nothing the second time.
-- A delivery is known by the SHA-256 of its signed body, and also by the X-GitHub-Delivery id
-- when it has one: the id header is not covered by the signature, so an attacker may change it,
-- but not the body. Rows are kept until keep_until: 7 days after the push's own time
-- (repository.pushed_at, signed), past which the service refuses the delivery as stale anyway,
-- or 7 days after receipt when the payload carries no such time. Expired rows are deleted when
-- deliveries arrive.
CREATE TABLE webhook_deliveries (
  project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
  body_sha256 text NOT NULL CHECK (body_sha256 ~ '^[0-9a-f]{64}$'),
  delivery_id text CHECK (char_length(delivery_id) BETWEEN 1 AND 200),
  received_at timestamptz NOT NULL,
  keep_until timestamptz NOT NULL,
  PRIMARY KEY (project_id, body_sha256)
);
CREATE UNIQUE INDEX webhook_deliveries_delivery_id ON webhook_deliveries (project_id, delivery_id) WHERE delivery_id IS NOT NULL;
CREATE INDEX webhook_deliveries_keep_until ON webhook_deliveries (keep_until);
