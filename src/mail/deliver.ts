// The send_email job: hands one outbox row to SMTP (nodemailer). The row is locked for the
// send (FOR UPDATE SKIP LOCKED), so two jobs for one e-mail never both send it, and a process
// killed mid-send releases the lock with its connection; the sweeper then queues the e-mail
// again (requeueStuckEmails). Without SMTP_URL the message is kept and printed to the log,
// link included, its text as a list of lines, so a developer running locally can follow it.
import nodemailer from 'nodemailer';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Sealer } from '../secrets.ts';

interface Deps {
  db: Database;
  clock: Clock;
  sealer: Sealer;
  smtpUrl?: string;
  from: string;
  log: Logger;
}

export function createDelivery({ db, clock, sealer, smtpUrl, from, log }: Deps) {
  const transport = smtpUrl ? nodemailer.createTransport(smtpUrl, { from }) : undefined;

  return async function deliver(emailId: string) {
    let failure: unknown;
    await db.transaction().execute(async (trx) => {
      const mail = await trx
        .selectFrom('emails')
        .selectAll()
        .where('id', '=', emailId)
        .where('status', '=', 'pending')
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!mail) return; // delivered already, or being delivered by another job right now
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
        await trx
          .updateTable('emails')
          .set({ status: 'logged', delivered_at: clock.now(), attempts: mail.attempts + 1 })
          .where('id', '=', mail.id)
          .execute();
        return;
      }
      try {
        await transport.sendMail({
          from,
          to: mail.to_address,
          subject: mail.subject,
          text,
          html: sealer.open(mail.sealed_html),
        });
      } catch (err) {
        failure = err;
        await trx
          .updateTable('emails')
          .set({
            attempts: mail.attempts + 1,
            last_error: String((err as Error).message).slice(0, 500),
          })
          .where('id', '=', mail.id)
          .execute();
        return;
      }
      await trx
        .updateTable('emails')
        .set({
          status: 'sent',
          delivered_at: clock.now(),
          attempts: mail.attempts + 1,
          last_error: null,
        })
        .where('id', '=', mail.id)
        .execute();
    });
    if (failure) {
      log.warn(
        { email_id: emailId, err: (failure as Error).message },
        'e-mail delivery failed; it will be retried',
      );
      throw failure; // graphile-worker retries with exponential back-off
    }
  };
}

/**
 * E-mails still pending a minute after they were written get their job queued again. A job
 * waiting for its back-off keeps its time (preserve_run_at); a job locked by a worker that died
 * is replaced by a fresh one. A duplicate finds the row locked or sent and does nothing.
 */
export async function requeueStuckEmails(db: Database, now: Date) {
  const stuck = await db
    .selectFrom('emails')
    .select('id')
    .where('status', '=', 'pending')
    .where('created_at', '<', new Date(now.getTime() - 60_000))
    .limit(1000)
    .execute();
  for (const { id } of stuck) {
    await sql`select graphile_worker.add_job('send_email', json_build_object('email_id', ${id}::text),
      max_attempts := 1000, job_key := ${id}::text, job_key_mode := 'preserve_run_at')`.execute(db);
  }
  return stuck.length;
}
