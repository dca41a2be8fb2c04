-- Addresses (CONTRACT 5b). Each frame holds its DNS label, `<name part>-<id part>`, made at
-- creation (src/frames/frame-address.ts) and never changed: a rename keeps it, and it goes with
-- the frame. Its hostname is the label under APPS_DOMAIN, which is the service's setting, not
-- the row's, so a new domain needs no rewrite. Unique: the edge routes by it. The label never
-- changes, so this index costs the frame's frequent updates no HOT update (migrations/0018).
ALTER TABLE frames ADD COLUMN hostname_label text;

-- Frames made before this get theirs as frame-address.ts makes it: runs of characters outside
-- [A-Za-z0-9] become one '-', then lower case, trimmed, 40 characters at most, 'app' when
-- empty; then the last 6 characters of the id. Two such frames with the same label (the same
-- name part and the same 6 characters: most unlikely, but a failed migration stops the
-- service) give the later ones the 6 characters before those.
WITH named AS (
  SELECT id, coalesce(nullif(rtrim(left(trim(BOTH '-' FROM
    lower(regexp_replace(name, '[^A-Za-z0-9]+', '-', 'g'))), 40), '-'), ''), 'app') AS part
  FROM frames
), numbered AS (
  SELECT id, part,
    row_number() OVER (PARTITION BY part, lower(right(id, 6)) ORDER BY id) AS n
  FROM named
)
UPDATE frames f
SET hostname_label = n.part || '-' ||
  lower(CASE WHEN n.n = 1 THEN right(f.id, 6) ELSE left(right(f.id, 12), 6) END)
FROM numbered n
WHERE n.id = f.id;

ALTER TABLE frames ALTER COLUMN hostname_label SET NOT NULL;
ALTER TABLE frames ADD CONSTRAINT frames_hostname_label_key UNIQUE (hostname_label);
ALTER TABLE frames ADD CONSTRAINT frames_hostname_label_check
  CHECK (hostname_label ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$');

-- What each agent last said of its edge in a sync (`edge`): the ports where it serves its
-- frames by hostname, https only with TLS. Null ports: it has no edge, or never said
-- (edge_reported false); either way its frames have no URL. Written only by a sync that says
-- it, in the statement that already writes the agent's last_seen_at (agent-api/sync-dal.ts).
ALTER TABLE agents
  ADD COLUMN edge_http_port integer CHECK (edge_http_port BETWEEN 1 AND 65535),
  ADD COLUMN edge_https_port integer CHECK (edge_https_port BETWEEN 1 AND 65535),
  ADD COLUMN edge_reported boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT agents_edge_check CHECK (
    (edge_https_port IS NULL OR edge_http_port IS NOT NULL)
    AND (edge_reported OR edge_http_port IS NULL));
