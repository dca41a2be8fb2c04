-- Outgoing notifications (issue 39): a project's admins register webhook endpoints, each with
-- the events it wants. An event that one of them wants becomes a delivery row, written in the
-- transaction of the change it tells of together with the graphile-worker job that sends it,
-- so a committed change is always told and a rolled-back one never is (src/notifications/).
-- Every try is logged (notification_attempts); the log is pruned per endpoint as it grows.
CREATE TABLE notification_endpoints (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES projects ON DELETE CASCADE,
  url text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
  events text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 32),
  format text NOT NULL CHECK (format IN ('json', 'slack')),
  -- The signing secret, sealed as env values are (secrets.ts): it must be read back to sign.
  secret_sealed text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  -- 'manual': an admin turned it off; 'failing': the service did, after failures (retry.ts).
  disabled_reason text CHECK (disabled_reason IN ('manual', 'failing')),
  disabled_at timestamptz,
  -- Failed tries in a row of the automatic deliveries, and when the first of them was made.
  consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  failing_since timestamptz,
  created_by text REFERENCES users ON DELETE SET NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK (enabled = (disabled_reason IS NULL)),
  CHECK (enabled = (disabled_at IS NULL)),
  CHECK ((consecutive_failures = 0) = (failing_since IS NULL))
);
CREATE INDEX notification_endpoints_project ON notification_endpoints (project_id, id);

-- One event for one endpoint. `body` is the event as sent (json keeps the text and its key
-- order, so every try and every redelivery sends the same bytes). `manual`: a ping or a
-- redelivery someone asked for, tried once.
CREATE TABLE notification_deliveries (
  id text PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES notification_endpoints ON DELETE CASCADE,
  event_id text NOT NULL,
  event_type text NOT NULL,
  body json NOT NULL,
  manual boolean NOT NULL,
  -- The delivery this one sends again; no foreign key: the log forgets old deliveries.
  redelivery_of text,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at timestamptz,
  last_error text CHECK (char_length(last_error) <= 500),
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
  CHECK ((status = 'pending') = (finished_at IS NULL))
);
CREATE INDEX notification_deliveries_endpoint ON notification_deliveries (endpoint_id, id);
CREATE INDEX notification_deliveries_due ON notification_deliveries (next_attempt_at)
  WHERE status = 'pending';

-- Every try of a delivery: what the receiver answered (a bounded excerpt) or why none came.
CREATE TABLE notification_attempts (
  delivery_id text NOT NULL REFERENCES notification_deliveries ON DELETE CASCADE,
  attempt integer NOT NULL CHECK (attempt >= 1),
  at timestamptz NOT NULL,
  ok boolean NOT NULL,
  status_code integer CHECK (status_code BETWEEN 100 AND 599),
  latency_ms integer NOT NULL CHECK (latency_ms >= 0),
  response_excerpt text CHECK (octet_length(response_excerpt) <= 1024),
  error text CHECK (char_length(error) <= 500),
  PRIMARY KEY (delivery_id, attempt)
);
