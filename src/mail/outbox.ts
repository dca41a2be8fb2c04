// The outbox: an e-mail is a row, written in the caller's transaction together with the job
// that delivers it, so a committed invitation always has its e-mail and a rolled-back one never
// does. The job retries with back-off until the SMTP server takes the message.
import type { Queryable } from '../db/database.ts';
import type { Sealer } from '../secrets.ts';
import { newId } from '../ids.ts';
import { insertEmail, queueDelivery } from './mail-dal.ts';

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

// Delivery is retried (exponential back-off, capped at a few hours per try) far longer than any
// outage we plan for; an e-mail never fails for good on its own.
export const MAX_ATTEMPTS = 1000;

export async function enqueueEmail(
  q: Queryable,
  sealer: Sealer,
  now: Date,
  mail: OutgoingEmail,
): Promise<string> {
  const id = newId('email', now);
  await insertEmail(q, {
    id,
    to_address: mail.to,
    subject: mail.subject,
    sealed_text: sealer.seal(mail.text),
    sealed_html: sealer.seal(mail.html),
    created_at: now,
  });
  await queueDelivery(q, id, MAX_ATTEMPTS);
  return id;
}
