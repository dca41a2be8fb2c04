// The send_email job: hands one outbox row to SMTP (nodemailer). The row is locked for the
// send (FOR UPDATE SKIP LOCKED), so two jobs for one e-mail never both send it, and a process
// killed mid-send releases the lock with its connection; the sweeper then queues the e-mail
// again (requeueStuckEmails). Without SMTP_URL the message is kept and printed to the log,
// link included, its text as a list of lines, so a developer running locally can follow it.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import { transaction } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Sealer } from '../secrets.ts';
import * as dal from './mail-dal.ts';
import { MAX_ATTEMPTS } from './outbox.ts';

interface Deps {
  db: Database;
  clock: Clock;
  sealer: Sealer;
  smtpUrl?: string;
  from: string;
  log: Logger;
}

/** What handing the e-mail over did: done (sent, or logged without SMTP) or failed. */
type Handover = { ok: true } | { ok: false; err: unknown };

export function createDelivery({ db, clock, sealer, smtpUrl, from, log }: Deps) {
  const transport = smtpUrl ? nodemailer.createTransport(smtpUrl, { from }) : undefined;

  /** Sends the e-mail, or logs it when there is no SMTP server. Never throws. */
  async function handOver(
    mail: NonNullable<Awaited<ReturnType<typeof dal.pendingEmailForUpdate>>>,
  ) {
    const text = sealer.open(mail.sealed_text);
    if (!transport) {
      // The text part one line per element: a JSON log line keeps it readable (in the message
      // it was one string of \n escapes), and a log collector still gets one record.
      const fields = {
        email_id: mail.id,
        to: mail.to_address,
        subject: mail.subject,
        text: text.split('\n'),
      };
      log.info(fields, 'e-mail kept, not sent (no SMTP_URL)');
      return { ok: true } as const;
    }
    try {
      await transport.sendMail({
        from,
        to: mail.to_address,
        subject: mail.subject,
        text,
        html: sealer.open(mail.sealed_html),
      });
      return { ok: true } as const;
    } catch (err) {
      return { ok: false, err } as const;
    }
  }

  return async function deliver(emailId: string) {
    // Kept across attempts of the transaction: when PostgreSQL aborts it (a deadlock, a stale
    // plan) after the SMTP server took the message, the retry records what happened instead of
    // sending the message a second time.
    let handover: Handover | undefined;
    await transaction(db, async (trx) => {
      const mail = await dal.pendingEmailForUpdate(trx, emailId);
      if (!mail) return; // delivered already, or being delivered by another job right now
      handover ??= await handOver(mail);
      const attempts = mail.attempts + 1;
      if (!handover.ok) {
        const message = String((handover.err as Error).message).slice(0, 500);
        await dal.recordFailure(trx, mail.id, attempts, message);
      } else if (transport) await dal.markSent(trx, mail.id, clock.now(), attempts);
      else await dal.markLogged(trx, mail.id, clock.now(), attempts);
    });
    if (handover && !handover.ok) {
      log.warn(
        { email_id: emailId, err: (handover.err as Error).message },
        'e-mail delivery failed; it will be retried',
      );
      throw handover.err; // graphile-worker retries with exponential back-off
    }
  };
}

/**
 * E-mails still pending a minute after they were written get their job queued again. A job
 * waiting for its back-off keeps its time (preserve_run_at); a job locked by a worker that died
 * is replaced by a fresh one. A duplicate finds the row locked or sent and does nothing.
 */
export async function requeueStuckEmails(db: Database, now: Date) {
  const stuck = await dal.pendingSince(db, new Date(now.getTime() - 60_000), 1000);
  for (const id of stuck) await dal.queueDelivery(db, id, MAX_ATTEMPTS, true);
  return stuck.length;
}
