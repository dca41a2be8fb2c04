// The send_email job: reads the outbox row and hands it to SMTP (nodemailer). Without SMTP_URL
// the message is kept in the outbox and printed to the log, link included, so a developer
// running locally can still follow it.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Sealer } from '../secrets.ts';

interface Deps { db: Database; clock: Clock; sealer: Sealer; smtpUrl?: string; from: string; log: Logger }

export function createDelivery({ db, clock, sealer, smtpUrl, from, log }: Deps) {
  const transport = smtpUrl ? nodemailer.createTransport(smtpUrl, { from }) : undefined;

  return async function deliver(emailId: string) {
    const mail = await db.selectFrom('emails').selectAll().where('id', '=', emailId).executeTakeFirst();
    if (!mail || mail.status !== 'pending') return; // already delivered by an earlier try
    const text = sealer.open(mail.sealed_text);
    if (!transport) {
      log.info({ email_id: mail.id, to: mail.to_address, subject: mail.subject }, `e-mail kept (no SMTP_URL):\n${text}`);
      await db.updateTable('emails').set({ status: 'logged', delivered_at: clock.now(), attempts: mail.attempts + 1 })
        .where('id', '=', mail.id).execute();
      return;
    }
    try {
      await transport.sendMail({ from, to: mail.to_address, subject: mail.subject, text, html: sealer.open(mail.sealed_html) });
    } catch (err) {
      await db.updateTable('emails').set({ attempts: mail.attempts + 1, last_error: String((err as Error).message).slice(0, 500) })
        .where('id', '=', mail.id).execute();
      log.warn({ email_id: mail.id, err: (err as Error).message }, 'e-mail delivery failed; it will be retried');
      throw err;
    }
    await db.updateTable('emails').set({ status: 'sent', delivered_at: clock.now(), attempts: mail.attempts + 1, last_error: null })
      .where('id', '=', mail.id).execute();
  };
}
