-- Room on each page for a row's next version. A frame's row is rewritten far more often than
-- frames are created: by every stop, start and deploy, and by its replicas, deployments and
-- events (migrations/0005, 0016). None of those writes changes an indexed column, so each could
-- be a HOT update (the new version on the same page, no new entry in any of the table's seven
-- indexes) but for room on the page: full pages made nine updates in ten go elsewhere, each
-- with an entry in every index. Measured on the bench's stop/start, at 16 connections.
-- Access tokens are rewritten for `last_used_at` (identity/token-touches.ts), likewise.
-- Pages written before this keep their fill; updates move rows to new pages with room.
ALTER TABLE frames SET (fillfactor = 70);
ALTER TABLE access_tokens SET (fillfactor = 80);
