// The send_email task (src/mail/deliver.ts, src/mail/outbox.ts) as production runs it: an outbox
// row and its job written in the caller's transaction, the job run by graphile-worker with the
// real task list, nodemailer talking to a real SMTP server on a local port. The task function is
// also called directly where the worker's timing would blur what is checked: concurrent runs,
// failures and retries, and the log of a kept e-mail.
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../../src/db/database.ts';
import { createDelivery } from '../../src/mail/deliver.ts';
import { enqueueEmail } from '../../src/mail/outbox.ts';
import { newId } from '../../src/ids.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import { freePort, startSmtp, type SmtpCatcher } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';

const FROM = 'Frameplane Tests <robot@frameplane.test>';
const address = (name: string) => `${name}.${randomBytes(4).toString('hex')}@example.test`;

let smtp: SmtpCatcher;
let t: TestApp;
beforeAll(async () => {
  smtp = await startSmtp();
  t = await testApp({ worker: true, env: { SMTP_URL: smtp.url, MAIL_FROM: FROM } });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

const mail = (to: string) => ({
  to,
  subject: `Hello ${to}`,
  text: `Plain text for ${to}\nsecond line`,
  html: `<p>HTML for ${to}</p>`,
});

const rowOf = (id: string) =>
  t.db
    .selectFrom('emails')
    .select(['status', 'attempts', 'last_error', 'delivered_at', 'sealed_text', 'to_address'])
    .where('id', '=', id)
    .executeTakeFirst();

const until = <T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean) =>
  waitFor(what, probe, { until: ok, timeoutMs: 30_000, everyMs: 100 });

/** An outbox row with no job: only a direct call of the task delivers it. */
async function rowWithoutJob(to: string) {
  const now = t.clock.now();
  const id = newId('email', now);
  const m = mail(to);
  await t.db
    .insertInto('emails')
    .values({
      id,
      to_address: to,
      subject: m.subject,
      sealed_text: t.core.sealer.seal(m.text),
      sealed_html: t.core.sealer.seal(m.html),
      created_at: now,
    })
    .execute();
  return id;
}

const jobsFor = async (emailId: string) =>
  (
    await sql<{ id: string }>`select j.id::text from graphile_worker._private_jobs j
      where j.key = ${emailId}`.execute(t.db)
  ).rows;

describe('through the worker', () => {
  it('an e-mail written in a transaction is sent once, with its text and HTML parts', async () => {
    const to = address('ann');
    const id = await transaction(t.db, (trx) =>
      enqueueEmail(trx, t.core.sealer, t.clock.now(), mail(to)),
    );
    const row = await until(
      'the e-mail to be sent',
      async () => rowOf(id),
      (r) => r?.status === 'sent',
    );
    expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null, to_address: to });
    expect(row?.delivered_at).toBeInstanceOf(Date);
    // Sealed at rest: the body is not in the row.
    expect(row?.sealed_text).not.toContain('Plain text');

    await smtp.waitFor((ms) => ms.some((m) => m.rcptTo.includes(to)));
    const [message, ...more] = smtp.to(to);
    expect(more).toEqual([]);
    expect(message).toMatchObject({
      mailFrom: 'robot@frameplane.test',
      subject: `Hello ${to}`,
      html: expect.stringContaining(`<p>HTML for ${to}</p>`),
    });
    // SMTP carries lines ended by CRLF.
    expect(message?.text.replace(/\r\n/g, '\n')).toBe(`Plain text for ${to}\nsecond line`);
    expect(message?.headers.from).toContain('robot@frameplane.test');
    expect(await jobsFor(id)).toEqual([]);
  });

  it('a second job for an e-mail already sent sends nothing', async () => {
    const to = address('bob');
    const id = await transaction(t.db, (trx) =>
      enqueueEmail(trx, t.core.sealer, t.clock.now(), mail(to)),
    );
    await until(
      'the e-mail to be sent',
      async () => rowOf(id),
      (r) => r?.status === 'sent',
    );
    await sql`select graphile_worker.add_job('send_email', json_build_object('email_id', ${id}::text),
      job_key := ${`again-${id}`}::text)`.execute(t.db);
    await until(
      'the second job to finish',
      async () =>
        (
          await sql`select 1 from graphile_worker._private_jobs where key = ${`again-${id}`}`.execute(
            t.db,
          )
        ).rows.length,
      (n) => n === 0,
    );
    expect(smtp.to(to)).toHaveLength(1);
    expect((await rowOf(id))?.attempts).toBe(1);
  });

  it('a rolled-back transaction leaves neither the e-mail nor its job', async () => {
    const to = address('gone');
    let id = '';
    await expect(
      transaction(t.db, async (trx) => {
        id = await enqueueEmail(trx, t.core.sealer, t.clock.now(), mail(to));
        throw new Error('the caller changed its mind');
      }),
    ).rejects.toThrow('the caller changed its mind');
    expect(id).toMatch(/^eml_/);
    expect(await rowOf(id)).toBeUndefined();
    expect(await jobsFor(id)).toEqual([]);
  });
});

describe('the task function, called directly', () => {
  const deliverTo = (smtpUrl: string | undefined, log = pino({ level: 'silent' })) =>
    createDelivery({ db: t.db, clock: t.clock, sealer: t.core.sealer, smtpUrl, from: FROM, log });

  it('five concurrent runs for one e-mail send it once', async () => {
    const to = address('many');
    const id = await rowWithoutJob(to);
    const deliver = deliverTo(smtp.url);
    await Promise.all(Array.from({ length: 5 }, () => deliver(id)));
    // The catcher keeps a message before it answers 250, so every send has landed by now.
    expect(smtp.to(to)).toHaveLength(1);
    expect(await rowOf(id)).toMatchObject({ status: 'sent', attempts: 1 });
  });

  it('an unknown id is nothing to do', async () => {
    await expect(deliverTo(smtp.url)(newId('email'))).resolves.toBeUndefined();
  });

  it('a refused connection throws (so the job is retried), counts the attempt and keeps the error; the retry after SMTP returns sends', async () => {
    const port = await freePort();
    const to = address('retry');
    const id = await rowWithoutJob(to);
    const deliver = deliverTo(`smtp://127.0.0.1:${port}`);
    await expect(deliver(id)).rejects.toThrow();
    let row = await rowOf(id);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, delivered_at: null });
    expect(row?.last_error).toMatch(/ECONNREFUSED|connect/i);
    await expect(deliver(id)).rejects.toThrow();
    expect((await rowOf(id))?.attempts).toBe(2);

    const back = await startSmtp(port);
    try {
      await deliver(id);
      row = await rowOf(id);
      expect(row).toMatchObject({ status: 'sent', attempts: 3, last_error: null });
      await back.waitFor((ms) => ms.length === 1);
      expect(back.to(to)).toHaveLength(1);
    } finally {
      await back.close();
    }
  });

  it('without SMTP_URL the e-mail is kept as logged, its text one log element per line', async () => {
    const records: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        records.push(JSON.parse(chunk.toString()));
        cb();
      },
    });
    const to = address('local');
    const id = await rowWithoutJob(to);
    await deliverTo(undefined, pino({ level: 'info' }, sink))(id);
    expect(await rowOf(id)).toMatchObject({ status: 'logged', attempts: 1, last_error: null });
    const kept = records.find((r) => r.email_id === id);
    expect(kept).toMatchObject({
      msg: 'e-mail kept, not sent (no SMTP_URL)',
      to,
      subject: `Hello ${to}`,
      text: [`Plain text for ${to}`, 'second line'],
    });
    expect(smtp.to(to)).toEqual([]);
  });
});
