// The send_email job runs in transaction(), which retries a transaction that PostgreSQL aborts
// for a deadlock, a serialization failure or a stale plan. The hand-over to SMTP happens inside
// it, so a retry after the server took the message must record the delivery, not send again.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import pino from 'pino';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newTeam, newUser } from '../helpers/factories.ts';
import { startSmtp, type SmtpCatcher } from '../helpers/smtp.ts';
import { createDelivery } from '../../src/mail/deliver.ts';

let smtp: SmtpCatcher;
let t: TestApp;
beforeAll(async () => {
  smtp = await startSmtp();
  t = await testApp({ env: { SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

it('a delivery whose transaction is aborted after the SMTP hand-over sends the e-mail once', async () => {
  const ann = await newUser(t, 'ann');
  const bob = await newUser(t, 'bob');
  const team = await newTeam(t, ann);
  const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
    token: ann.token,
    body: { email: bob.email, role: 'member' },
  });
  expect(inv.status, inv.text).toBe(201);
  const { id } = await t.db
    .selectFrom('emails')
    .select('id')
    .where('to_address', '=', bob.email)
    .executeTakeFirstOrThrow();

  // The first write to the row after the hand-over fails as a serialization failure would.
  // A sequence counts the writes: unlike a table, it keeps its count across the rollback.
  await sql`create sequence test_email_writes`.execute(t.db);
  await sql`create function test_fail_first_write() returns trigger language plpgsql as $$
    begin
      if nextval('test_email_writes') = 1 then
        raise exception 'injected serialization failure' using errcode = '40001';
      end if;
      return new;
    end $$`.execute(t.db);
  await sql`create trigger test_fail_first_write before update on emails
    for each row execute function test_fail_first_write()`.execute(t.db);

  const deliver = createDelivery({
    db: t.db,
    clock: t.clock,
    sealer: t.core.sealer,
    smtpUrl: smtp.url,
    from: t.config.mailFrom,
    log: pino({ level: 'silent' }),
  });
  await deliver(id);

  const writes = await sql<{ n: number }>`select last_value as n from test_email_writes`.execute(
    t.db,
  );
  expect(Number(writes.rows[0]?.n)).toBe(2); // the aborted attempt and the retry
  const row = await t.db
    .selectFrom('emails')
    .select(['status', 'attempts'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ status: 'sent', attempts: 1 });
  // deliver() returned once the server answered 250, and the catcher keeps a message before it
  // answers: every copy this delivery sent is here already.
  expect(smtp.to(bob.email)).toHaveLength(1);
});
