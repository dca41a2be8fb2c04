-- Frame metrics (issue 39): what each replica used (from its runtime) and what the edge answered
-- for each frame, sent by the agents in their sync. Each sync adds its samples to three rows per
-- replica (and per frame): the minute's, the five minutes' and the hour's (`resolution`, in
-- seconds; `at` its start), by the service's clock at ingest, so no roll-up job is needed and a
-- point never depends on the agent's clock. Five-minute rows are the step of a day's chart,
-- which then reads 288 rows a series instead of 1,440. Every column is a sum that adds up
-- (samples, seconds covered, CPU seconds, bytes, restarts, requests, the latency histogram) or
-- a maximum (memory), so any step is read from them exactly. The sweeper deletes minute and
-- five-minute rows past METRICS_MINUTE_RETENTION_HOURS and hour rows past
-- METRICS_HOUR_RETENTION_DAYS, which bounds the tables per replica, whatever the frames.

-- Rows are updated by every sync of their minute (and hour): room on each page lets those
-- updates be HOT (no index changes), which keeps the table and its indexes from bloating.
CREATE TABLE frame_replica_metrics (
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  resolution integer NOT NULL CHECK (resolution IN (60, 300, 3600)),
  at timestamptz NOT NULL,
  replica smallint NOT NULL CHECK (replica >= 0),
  samples integer NOT NULL CHECK (samples > 0),
  seconds double precision NOT NULL CHECK (seconds > 0),
  cpu_seconds double precision NOT NULL CHECK (cpu_seconds >= 0),
  memory_max_bytes bigint CHECK (memory_max_bytes >= 0),
  memory_limit_bytes bigint CHECK (memory_limit_bytes >= 0),
  net_rx_bytes bigint CHECK (net_rx_bytes >= 0),
  net_tx_bytes bigint CHECK (net_tx_bytes >= 0),
  restarts integer NOT NULL CHECK (restarts >= 0),
  PRIMARY KEY (frame_id, resolution, at, replica)
) WITH (fillfactor = 70);

CREATE TABLE frame_request_metrics (
  frame_id text NOT NULL REFERENCES frames ON DELETE CASCADE,
  resolution integer NOT NULL CHECK (resolution IN (60, 300, 3600)),
  at timestamptz NOT NULL,
  samples integer NOT NULL CHECK (samples > 0),
  seconds double precision NOT NULL CHECK (seconds > 0),
  status_1xx bigint NOT NULL CHECK (status_1xx >= 0),
  status_2xx bigint NOT NULL CHECK (status_2xx >= 0),
  status_3xx bigint NOT NULL CHECK (status_3xx >= 0),
  status_4xx bigint NOT NULL CHECK (status_4xx >= 0),
  status_5xx bigint NOT NULL CHECK (status_5xx >= 0),
  -- The latency histogram: requests by bucket of LATENCY_BOUNDS_MS (src/agent-api/sync-items.ts),
  -- latency_14 those slower than the last bound. Columns rather than an array: sums of columns
  -- are the cheapest both to add to (the ingest) and to read (sum() by step).
  latency_0 bigint NOT NULL CHECK (latency_0 >= 0),
  latency_1 bigint NOT NULL CHECK (latency_1 >= 0),
  latency_2 bigint NOT NULL CHECK (latency_2 >= 0),
  latency_3 bigint NOT NULL CHECK (latency_3 >= 0),
  latency_4 bigint NOT NULL CHECK (latency_4 >= 0),
  latency_5 bigint NOT NULL CHECK (latency_5 >= 0),
  latency_6 bigint NOT NULL CHECK (latency_6 >= 0),
  latency_7 bigint NOT NULL CHECK (latency_7 >= 0),
  latency_8 bigint NOT NULL CHECK (latency_8 >= 0),
  latency_9 bigint NOT NULL CHECK (latency_9 >= 0),
  latency_10 bigint NOT NULL CHECK (latency_10 >= 0),
  latency_11 bigint NOT NULL CHECK (latency_11 >= 0),
  latency_12 bigint NOT NULL CHECK (latency_12 >= 0),
  latency_13 bigint NOT NULL CHECK (latency_13 >= 0),
  latency_14 bigint NOT NULL CHECK (latency_14 >= 0),
  PRIMARY KEY (frame_id, resolution, at)
) WITH (fillfactor = 70);

-- The sweeper's cut, oldest first, of every frame at once.
CREATE INDEX frame_replica_metrics_age ON frame_replica_metrics (resolution, at);
CREATE INDEX frame_request_metrics_age ON frame_request_metrics (resolution, at);
