// How a delivery is signed, as Stripe signs its webhooks: HMAC-SHA256 under the endpoint's
// secret (the whole `whsec_…` string) over "<unix seconds>.<body>", sent as
// `Frameplane-Signature: t=<seconds>,v1=<hex>`. The time is inside the signature, so a receiver
// that refuses old times refuses replays. `verifySignature` is what docs/api.md tells receivers
// to do, and what the tests' receiver does.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Frameplane-Signature';

/** The header's value: one v1 per secret (two while a rotated one still signs). */
export function signatureOf(secrets: string[], unixSeconds: number, body: string): string {
  const macs = secrets.map(
    (s) => `v1=${createHmac('sha256', s).update(`${unixSeconds}.${body}`).digest('hex')}`,
  );
  return [`t=${unixSeconds}`, ...macs].join(',');
}

/** A receiver's check: a v1 signature matches and `t` is within `toleranceSeconds` of `now`. */
export function verifySignature(
  secret: string,
  header: string | undefined,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  if (!header) return false;
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${body}`).digest('hex'));
  return parts
    .filter(([k]) => k === 'v1')
    .some(([, v]) => {
      const given = Buffer.from(v ?? '');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
