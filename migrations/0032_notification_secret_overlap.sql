-- A rotated signing secret may go on signing for a while next to the new one (issue 39, as
-- Stripe's "roll secret" with an expiry): every delivery until then carries a v1 signature of
-- each, so a receiver can take the new secret at its own pace. Sealed as the secret is.
ALTER TABLE notification_endpoints
  ADD COLUMN previous_secret_sealed text,
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL));
