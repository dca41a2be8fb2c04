// Proof of e-mail ownership, end to end through HTTP, the outbox, the job worker and a real
// SMTP server: a squatter who signs up first with an invited address, the verification link,
// its expiry, its replay, closed sign-up, and the invitation token as proof.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, invitationToken, newTeam, newUser } from '../helpers/factories.ts';
import { startSmtp, type SmtpCatcher } from '../helpers/smtp.ts';
import { at, capture, only } from '../helpers/checked.ts';

const LINK = /http:\/\/frameplane\.test\/verify-email#token=([A-Za-z0-9_\-.~%]+)/;
const admin = { token: 'admin-token-for-tests' };
const address = (name: string) => `${name}.${randomBytes(4).toString('hex')}@example.test`;

let smtp: SmtpCatcher;
let t: TestApp;
beforeAll(async () => {
  smtp = await startSmtp();
  t = await testApp({
    worker: true,
    env: { SMTP_URL: smtp.url, RATE_VERIFICATION_EMAILS_PER_ADDRESS: '3' },
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});

/** The token of the `n`-th verification e-mail (1-based) that reached `to` over SMTP. */
async function mailedLink(to: string, n = 1): Promise<string> {
  const links = () =>
    smtp
      .to(to)
      .map((m) => LINK.exec(m.text)?.[1])
      .filter(Boolean) as string[];
  await smtp.waitFor(() => links().length >= n);
  return decodeURIComponent(at(links(), n - 1));
}

const signup = (email: string, password: string, extra: Record<string, string> = {}) =>
  t.post('/v2/auth/signup', { body: { email, password, ...extra } });

async function inviteTo(email: string) {
  const ann = await newUser(t, 'ann');
  const team = await newTeam(t, ann);
  const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
    token: ann.token,
    body: { email, role: 'admin' },
  });
  expect(inv.status, inv.text).toBe(201);
  return { ann, team, invitation: inv.json, token: await invitationToken(t, email) };
}

describe('the attack of the issue', () => {
  it('a squatter sees no invitations, the real person still gets in, and the squatter loses the address', async () => {
    const victim = address('victim');
    const { invitation } = await inviteTo(victim);

    const squat = await signup(victim, 'squatter-password');
    expect(squat.status, squat.text).toBe(201);
    expect(squat.json.user.email_verified).toBe(false);
    const listed = await t.get('/v2/user/invitations', { token: squat.json.access_token });
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual({ data: [], next_cursor: null });

    // Not locked out: the real person's sign-up waits for proof instead of answering email_taken.
    const real = await signup(victim.toUpperCase(), 'the-real-password');
    expect(real.status, real.text).toBe(202);
    expect(real.json).toEqual({ email: victim, expires_at: expect.any(String) });
    await smtp.waitFor(() => smtp.to(victim).length >= 3);
    const linkOf = (subject: string) => {
      const mail = smtp.to(victim).find((m) => m.subject === subject)!;
      return { mail, token: decodeURIComponent(capture(LINK, mail.text)) };
    };
    const { mail: takeover, token: link } = linkOf('Confirm your new Frameplane account');
    expect(takeover.text).toContain('Another account uses this address without having proved it');
    // Each link needs the password chosen with it: the real person's careless click on the
    // squatter's link confirms nothing, and the squatter's password opens no other link.
    const squatterLink = linkOf('Confirm your e-mail address on Frameplane').token;
    expectProblem(
      await t.post('/v2/auth/verify-email', {
        body: { token: squatterLink, password: 'the-real-password' },
      }),
      401,
      'invalid_credentials',
    );
    expectProblem(
      await t.post('/v2/auth/verify-email', {
        body: { token: link, password: 'squatter-password' },
      }),
      401,
      'invalid_credentials',
    );
    const ok = await t.post('/v2/auth/verify-email', {
      body: { token: link, password: 'the-real-password' },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.user).toMatchObject({ email: victim, email_verified: true });
    expect(ok.json.user.id).not.toBe(squat.json.user.id);

    const mine = await t.get('/v2/user/invitations', { token: ok.json.access_token });
    expect(mine.json.data.map((i: any) => i.id)).toEqual([invitation.id]);
    expectProblem(await t.get('/v2/user', { token: squat.json.access_token }), 401);
    expectProblem(
      await t.post('/v2/auth/login', { body: { email: victim, password: 'squatter-password' } }),
      401,
    );
    const released = await t.db
      .selectFrom('users')
      .select('email')
      .where('id', '=', squat.json.user.id)
      .executeTakeFirstOrThrow();
    expect(released.email).toBe(`${squat.json.user.id.toLowerCase()}@released.invalid`);
    // Now the address is proven: nobody else can take it.
    expectProblem(await signup(victim, 'another-password'), 409, 'email_taken');
  });

  it('signing up with the invitation token proves the mailbox at once and takes the address', async () => {
    const victim = address('invitee');
    const { team, token } = await inviteTo(victim);
    const squat = await signup(victim, 'squatter-password');
    expectProblem(
      await signup(victim, 'the-real-password', { invitation_token: 'inv_not-a-real-token' }),
      404,
    );
    expectProblem(
      await signup(address('other'), 'the-real-password', { invitation_token: token }),
      403,
      'email_mismatch',
    );

    const real = await signup(victim, 'the-real-password', { invitation_token: token });
    expect(real.status, real.text).toBe(201);
    expect(real.json.user.email_verified).toBe(true);
    expectProblem(await t.get('/v2/user', { token: squat.json.access_token }), 401);
    const accepted = await t.post(`/v2/teams/invitations/${token}/accept`, {
      token: real.json.access_token,
    });
    expect(accepted.json).toMatchObject({ team_id: team.id, user_id: real.json.user.id });
  });

  it('accepting by the e-mailed token verifies the address of an account that signed up plainly', async () => {
    const bob = address('bob');
    const s = await signup(bob, 'bob-long-password');
    const { token } = await inviteTo(bob);
    expect((await t.get('/v2/user', { token: s.json.access_token })).json.email_verified).toBe(
      false,
    );
    expect(
      (await t.post(`/v2/teams/invitations/${token}/accept`, { token: s.json.access_token }))
        .status,
    ).toBe(200);
    expect((await t.get('/v2/user', { token: s.json.access_token })).json.email_verified).toBe(
      true,
    );
    expectProblem(await signup(bob, 'someone-else-password'), 409, 'email_taken');
  });
});

describe('the verification link', () => {
  it('arrives by e-mail at sign-up, opens a page, verifies once with the password, and cannot be replayed', async () => {
    const carol = address('carol');
    const s = await signup(carol, 'carol-long-password');
    expect(s.status).toBe(201);
    const token = await mailedLink(carol);
    const mail = only(smtp.to(carol));
    expect(mail.subject).toBe('Confirm your e-mail address on Frameplane');
    expect(mail.html).toContain('http://frameplane.test/verify-email#token=');
    const stored = await t.db
      .selectFrom('email_verifications')
      .select('token_hash')
      .where('email', '=', carol)
      .execute();
    expect(stored).toHaveLength(1);
    expect(at(stored, 0).token_hash.toString('utf8')).not.toContain(token);

    const page = await t.get('/verify-email');
    expect(page.status).toBe(200);
    expect(String(page.headers['content-type'])).toContain('text/html');
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");
    expect(page.text).toMatch(
      /<script src="\/invitations\/assets\/verify-email\.js\?v=[0-9a-f]{12}" defer><\/script>/,
    );
    expect(page.text).not.toMatch(/<script>/);

    expectProblem(
      await t.post('/v2/auth/verify-email', { body: { token, password: 'wrong-password' } }),
      401,
      'invalid_credentials',
    );
    const ok = await t.post('/v2/auth/verify-email', {
      body: { token, password: 'carol-long-password' },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.user).toMatchObject({ id: s.json.user.id, email_verified: true });
    expect((await t.get('/v2/user', { token: s.json.access_token })).json.email_verified).toBe(
      true,
    );
    expectProblem(
      await t.post('/v2/auth/verify-email', { body: { token, password: 'carol-long-password' } }),
      409,
      'verification_used',
    );
    expectProblem(
      await t.post('/v2/auth/verify-email', { body: { token: 'vfy_unknown', password: 'x' } }),
      404,
      'verification_link_not_found',
    );
    expectProblem(
      await t.post('/v2/user/verification-email', { token: s.json.access_token }),
      409,
      'email_already_verified',
    );
  });

  it('expires after 24 hours of service clock; a resend gives a new one, limited per address', async () => {
    const dan = address('dan');
    const s = await signup(dan, 'dan-long-password');
    const first = await mailedLink(dan);
    await t.post('/v2/admin/clock', { ...admin, body: { advance_seconds: 24 * 3600 + 1 } });
    expectProblem(
      await t.post('/v2/auth/verify-email', {
        body: { token: first, password: 'dan-long-password' },
      }),
      410,
      'verification_expired',
    );

    const again = await t.post('/v2/user/verification-email', { token: s.json.access_token });
    expect(again.status, again.text).toBe(202);
    expect(again.json.email).toBe(dan);
    const second = await mailedLink(dan, 2);
    for (let i = 0; i < 2; i++)
      expect(
        (await t.post('/v2/user/verification-email', { token: s.json.access_token })).status,
      ).toBe(202);
    const limited = await t.post('/v2/user/verification-email', { token: s.json.access_token });
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

    expect(
      (
        await t.post('/v2/auth/verify-email', {
          body: { token: second, password: 'dan-long-password' },
        })
      ).status,
    ).toBe(200);
    expect((await t.get('/v2/user', { token: s.json.access_token })).json.email_verified).toBe(
      true,
    );
  });
});

describe('closed sign-up', () => {
  it('creates an account only once the mailbox is proven', async () => {
    const closed = await testApp({ worker: false, env: { SIGNUP: 'closed' } });
    try {
      const ann = await newUser(closed, 'ann');
      const team = await newTeam(closed, ann);
      expectProblem(
        await closed.post('/v2/auth/signup', {
          body: { email: 'walkin@example.test', password: 'long-enough-pw' },
        }),
        403,
        'signup_closed',
      );
      await closed.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: 'invited@example.test', role: 'member' },
      });
      const invToken = await invitationToken(closed, 'invited@example.test');

      // An invited address without proof: no account, a link instead.
      const pending = await closed.post('/v2/auth/signup', {
        body: { email: 'Invited@example.test', password: 'long-enough-pw' },
      });
      expect(pending.status, pending.text).toBe(202);
      expect(
        await closed.db
          .selectFrom('users')
          .select('id')
          .where('email', '=', 'invited@example.test')
          .execute(),
      ).toEqual([]);
      expectProblem(
        await closed.post('/v2/auth/login', {
          body: { email: 'invited@example.test', password: 'long-enough-pw' },
        }),
        401,
      );
      const mail = await closed.db
        .selectFrom('emails')
        .selectAll()
        .where('to_address', '=', 'invited@example.test')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      const link = decodeURIComponent(capture(LINK, closed.core.sealer.open(mail.sealed_text)));
      const ok = await closed.post('/v2/auth/verify-email', {
        body: { token: link, password: 'long-enough-pw' },
      });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.json.user).toMatchObject({ email: 'invited@example.test', email_verified: true });
      expect(
        (
          await closed.post(`/v2/teams/invitations/${invToken}/accept`, {
            token: ok.json.access_token,
          })
        ).status,
      ).toBe(200);

      // With the invitation's token, the account exists at once (the invitation page's path).
      await closed.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: 'second@example.test', role: 'viewer' },
      });
      const second = await invitationToken(closed, 'second@example.test');
      const direct = await closed.post('/v2/auth/signup', {
        body: {
          email: 'second@example.test',
          password: 'long-enough-pw',
          invitation_token: second,
        },
      });
      expect(direct.status, direct.text).toBe(201);
      expect(direct.json.user.email_verified).toBe(true);
    } finally {
      await closed.close();
    }
  });
});
