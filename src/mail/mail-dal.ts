// The outbox table and graphile-worker's queue: every statement of outbox.ts and deliver.ts.
import { sql } from 'kysely';
import type { Queryable } from '../db/database.ts';

export interface NewEmail {
  id: string;
  to_address: string;
  subject: string;
  sealed_text: string;
  sealed_html: string;
  created_at: Date;
}

export async function insertEmail(q: Queryable, values: NewEmail) {
  await q.insertInto('emails').values(values).execute();
}

/**
 * Queues the send_email job of an e-mail, keyed by its id: a second queueing replaces a job
 * that has not run yet instead of adding one. `preserveRunAt` keeps a waiting job's time (its
 * back-off) rather than running it now.
 */
export async function queueDelivery(
  q: Queryable,
  id: string,
  maxAttempts: number,
  preserveRunAt = false,
) {
  if (preserveRunAt) {
    await sql`select graphile_worker.add_job('send_email', json_build_object('email_id', ${id}::text),
      max_attempts := ${maxAttempts}::int, job_key := ${id}::text, job_key_mode := 'preserve_run_at')`.execute(
      q,
    );
  } else {
    await sql`select graphile_worker.add_job('send_email', json_build_object('email_id', ${id}::text),
      max_attempts := ${maxAttempts}::int, job_key := ${id}::text)`.execute(q);
  }
}

/**
 * The e-mail if it is still pending and no other transaction holds it, locked until this
 * transaction ends (FOR UPDATE SKIP LOCKED): two jobs for one e-mail never both send it.
 */
export function pendingEmailForUpdate(q: Queryable, id: string) {
  return q
    .selectFrom('emails')
    .selectAll()
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** Kept and logged instead of sent (no SMTP_URL). */
export async function markLogged(q: Queryable, id: string, now: Date, attempts: number) {
  await q
    .updateTable('emails')
    .set({ status: 'logged', delivered_at: now, attempts })
    .where('id', '=', id)
    .execute();
}

export async function markSent(q: Queryable, id: string, now: Date, attempts: number) {
  await q
    .updateTable('emails')
    .set({ status: 'sent', delivered_at: now, attempts, last_error: null })
    .where('id', '=', id)
    .execute();
}

/** A failed try: the e-mail stays pending. */
export async function recordFailure(q: Queryable, id: string, attempts: number, error: string) {
  await q.updateTable('emails').set({ attempts, last_error: error }).where('id', '=', id).execute();
}

/** Ids of e-mails still pending that were written before `before`, at most `limit`. */
export async function pendingSince(q: Queryable, before: Date, limit: number) {
  const rows = await q
    .selectFrom('emails')
    .select('id')
    .where('status', '=', 'pending')
    .where('created_at', '<', before)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
