// Invitation e-mails end to end: the outbox row, the graphile-worker job and nodemailer, against
// a real SMTP server (smtp-server) on a local port. Also: SMTP down then back (retries with
// back-off, each e-mail delivered exactly once), no SMTP_URL (kept and logged), and a rolled-back
// invitation (no e-mail at all).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { sql } from 'kysely';
import { testApp, type TestApp } from '../helpers/app.ts';
import {
  addMember,
  expectProblem,
  invitationToken,
  newTeam,
  newUser,
} from '../helpers/factories.ts';
import { freePort, startSmtp, type SmtpCatcher } from '../helpers/smtp.ts';
import { at } from '../helpers/checked.ts';
import { waitFor } from '../helpers/wait.ts';

const LINK = /http:\/\/frameplane\.test\/invitations\/([A-Za-z0-9_\-.~%]+)/;
const address = (name: string) => `${name}.${randomBytes(4).toString('hex')}@example.test`;
const until = <T>(
  what: string,
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs: number,
) => waitFor(what, probe, { until: ok, timeoutMs, everyMs: 100 });

/**
 * Waits until the worker has no job left for e-mails to `addresses` (a job's key is its
 * e-mail's id; graphile-worker deletes a job once done): every message it was to send is sent,
 * and the catcher keeps a message before it answers 250. A duplicate, had the worker sent one,
 * is caught by then.
 */
const untilNoJobsFor = (t: TestApp, addresses: string[]) =>
  waitFor(
    `the worker to finish every job for ${addresses.join(', ')}`,
    async () =>
      (
        await sql<{ key: string; attempts: number }>`select j.key, j.attempts
          from graphile_worker._private_jobs j join emails e on e.id = j.key
          where e.to_address = any(${addresses}::text[])`.execute(t.db)
      ).rows,
    { until: (jobs) => jobs.length === 0, timeoutMs: 15_000, everyMs: 50 },
  );

const outbox = (t: TestApp, to: string) =>
  t.db
    .selectFrom('emails')
    .select(['id', 'to_address', 'status', 'attempts', 'last_error', 'delivered_at'])
    .where('to_address', '=', to)
    .orderBy('id')
    .execute();

describe('with a working SMTP server', () => {
  let smtp: SmtpCatcher;
  let t: TestApp;
  beforeAll(async () => {
    smtp = await startSmtp();
    t = await testApp({ worker: true, env: { SMTP_URL: smtp.url } });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('(a) an invitation sends one e-mail with text and HTML parts carrying the link; the link accepts; the row is sent', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const team = await newTeam(t, ann, 'Blue Ops');
    const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'member' },
    });
    expect(inv.status, inv.text).toBe(201);

    const sent = await until(
      'the outbox row to be sent',
      () => outbox(t, bob.email),
      (rows) => rows[0]?.status === 'sent',
      15_000,
    );
    const row = at(sent, 0);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, last_error: null });
    expect(row.delivered_at).toBeInstanceOf(Date);
    await smtp.waitFor(() => smtp.to(bob.email).length >= 1);
    await untilNoJobsFor(t, [bob.email]);
    const mails = smtp.to(bob.email);
    expect(mails).toHaveLength(1);
    const mail = at(mails, 0);

    expect(mail.rcptTo).toEqual([bob.email]);
    expect(mail.mailFrom).toBe('no-reply@localhost');
    expect(mail.headers['content-type']).toMatch(/^multipart\/alternative/i);
    expect(mail.parts).toEqual(['text/plain', 'text/html']);
    expect(mail.subject).toContain('Blue Ops');

    const m = LINK.exec(mail.text);
    expect(m, mail.text).not.toBeNull();
    const link = m![0];
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.text).not.toMatch(/<[a-z]/i); // the text part is really plain text
    // The token in the e-mail is the one the outbox sealed, and it appears nowhere in the API.
    const token = decodeURIComponent(m![1]!);
    expect(token).toBe(await invitationToken(t, bob.email));
    expect(inv.text).not.toContain(token);

    const ok = await t.post(`/v2/teams/invitations/${encodeURIComponent(token)}/accept`, {
      token: bob.token,
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ team_id: team.id, user_id: bob.id, role: 'member' });
  });

  it('(d) a rolled-back invitation creates no e-mail', async () => {
    const ann = await newUser(t, 'ann');
    const carol = await newUser(t, 'carol');
    const team = await newTeam(t, ann);
    await addMember(t, team.id, carol, 'viewer');
    const before = await t.db.selectFrom('emails').select('id').execute();

    // Already a member: the transaction rolls back before (and after) queueing anything.
    expectProblem(
      await t.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: carol.email, role: 'member' },
      }),
      409,
      'already_member',
    );

    // A second open invitation to one address: the insert fails, so the e-mail of that attempt
    // must not exist either, while the first one is delivered once.
    const dave = address('dave');
    expect(
      (
        await t.post(`/v2/teams/${team.id}/invitations`, {
          token: ann.token,
          body: { email: dave, role: 'viewer' },
        })
      ).status,
    ).toBe(201);
    expectProblem(
      await t.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: dave, role: 'admin' },
      }),
      409,
      'invitation_exists',
    );

    await until(
      "dave's e-mail to be sent",
      () => outbox(t, dave),
      (rows) => rows.every((r) => r.status === 'sent') && rows.length > 0,
      15_000,
    );
    await untilNoJobsFor(t, [carol.email, dave]);
    const after = await t.db.selectFrom('emails').select(['id', 'to_address']).execute();
    const added = after.filter((e) => !before.some((b) => b.id === e.id));
    expect(added.map((e) => e.to_address)).toEqual([dave]);
    expect(smtp.to(carol.email)).toHaveLength(0);
    expect(smtp.to(dave)).toHaveLength(1);
  });
});

describe('when the SMTP server is down', () => {
  let t: TestApp | undefined;
  let smtp: SmtpCatcher | undefined;
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('(b) invitations are stored, retried with back-off, and each e-mail arrives exactly once when SMTP returns', async () => {
    const port = await freePort();
    t = await testApp({ worker: true, env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const guests = Array.from({ length: 5 }, (_, i) => address(`guest${i}`));
    for (const email of guests) {
      const r = await t.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email, role: 'member' },
      });
      expect(r.status, r.text).toBe(201);
    }
    const stored = await t.db
      .selectFrom('invitations')
      .select('email')
      .where('team_id', '=', team.id)
      .execute();
    expect(stored.map((i) => i.email).sort()).toEqual([...guests].sort());

    // Every e-mail has been tried and has failed; none is lost.
    const failed = await until(
      'every e-mail to fail at least once',
      () => t!.db.selectFrom('emails').selectAll().where('to_address', 'in', guests).execute(),
      (rows) => rows.length === 5 && rows.every((r) => r.attempts > 0),
      15_000,
    );
    for (const r of failed) {
      expect(r.status).toBe('pending');
      expect(r.last_error).toBeTruthy();
      expect(r.delivered_at).toBeNull();
    }

    smtp = await startSmtp(port);
    const started = Date.now();
    const sent = await until(
      'every e-mail to be sent',
      () => t!.db.selectFrom('emails').selectAll().where('to_address', 'in', guests).execute(),
      (rows) => rows.every((r) => r.status === 'sent'),
      40_000,
    );
    const tookMs = Date.now() - started;
    await smtp.waitFor((ms) => ms.length >= 5);
    await untilNoJobsFor(t, guests);

    for (const email of guests) expect(smtp.to(email), email).toHaveLength(1);
    expect(smtp.messages).toHaveLength(5);
    for (const r of sent) {
      expect(r.attempts).toBeGreaterThanOrEqual(2);
      expect(r.last_error).toBeNull();
    }
    // Each message still carries a working link.
    for (const email of guests) expect(at(smtp.to(email), 0).text).toMatch(LINK);
    expect(tookMs).toBeLessThan(40_000);
  }, 90_000);
});

describe('without SMTP_URL', () => {
  const lines: string[] = [];
  let t: TestApp;
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    t = await testApp({ worker: true, logger: pino({ level: 'info' }, sink) });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('(c) the e-mail is kept (status logged) and its link is printed to the log', async () => {
    expect(t.config.smtpUrl).toBeUndefined();
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const guest = address('guest');
    const r = await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: guest, role: 'viewer' },
    });
    expect(r.status, r.text).toBe(201);

    const logged = await until(
      'the e-mail to be logged',
      () => outbox(t, guest),
      (rows) => rows[0]?.status === 'logged',
      15_000,
    );
    const row = at(logged, 0);
    expect(row.delivered_at).toBeInstanceOf(Date);
    const log = lines.join('');
    expect(log).toContain('/invitations/');
    const token = await invitationToken(t, guest);
    expect(log).toContain(`http://frameplane.test/invitations/${encodeURIComponent(token)}`);
    expect(log).toContain(guest);
  });
});
