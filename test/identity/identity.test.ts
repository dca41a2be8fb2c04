import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, invitationToken, newTeam, newUser } from '../helpers/factories.ts';
import { capture } from '../helpers/checked.ts';
import { waitFor } from '../helpers/wait.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    env: {
      RATE_FAILED_LOGINS_PER_ADDRESS: '3',
      RATE_FAILED_LOGINS_PER_IP: '50',
      RATE_SIGNUPS_PER_IP: '1000',
    },
  });
});
afterAll(async () => {
  await t.close();
});
const admin = { token: 'admin-token-for-tests' };

describe('identity', () => {
  it('signs up, logs in, reads itself, and refuses duplicates case-insensitively', async () => {
    const s = await t.post('/v2/auth/signup', {
      body: { email: 'Carol@Example.TEST', password: 'carol-long-password', name: 'Carol' },
    });
    expect(s.status, s.text).toBe(201);
    expect(s.json.user).toMatchObject({ email: 'carol@example.test', name: 'Carol' });
    expect(s.json.access_token).toMatch(/^fp_/);
    // An address nobody proved yet is not taken: a second sign-up waits for proof (202).
    const again = await t.post('/v2/auth/signup', {
      body: { email: 'CAROL@example.test', password: 'another-password' },
    });
    expect(again.status, again.text).toBe(202);
    await t.db
      .updateTable('users')
      .set({ email_verified_at: t.clock.now() })
      .where('id', '=', s.json.user.id)
      .execute();
    expectProblem(
      await t.post('/v2/auth/signup', {
        body: { email: 'CAROL@example.test', password: 'another-password' },
      }),
      409,
      'email_taken',
    );
    expectProblem(
      await t.post('/v2/auth/signup', { body: { email: 'dan@example.test', password: 'short' } }),
      422,
    );
    expectProblem(
      await t.post('/v2/auth/signup', {
        body: { email: 'not-an-email', password: 'long-enough-pw' },
      }),
      422,
    );

    const l = await t.post('/v2/auth/login', {
      body: { email: 'carol@EXAMPLE.test', password: 'carol-long-password' },
    });
    expect(l.status).toBe(200);
    expect(new Date(l.json.expires_at).getTime() - Date.now()).toBeGreaterThan(29 * 86400_000);
    const me = await t.get('/v2/user', { token: l.json.access_token });
    expect(me.json).toEqual({
      id: s.json.user.id,
      email: 'carol@example.test',
      name: 'Carol',
      created_at: expect.any(String),
      email_verified: true,
    });
    const bad = await t.post('/v2/auth/login', {
      body: { email: 'carol@example.test', password: 'wrong-password' },
    });
    const unknown = await t.post('/v2/auth/login', {
      body: { email: 'nobody@example.test', password: 'wrong-password' },
    });
    expect([bad.status, unknown.status]).toEqual([401, 401]);
    expect(bad.json.detail).toBe(unknown.json.detail);
  });

  it('rate limits failed logins per address, with Retry-After, and the window follows the service clock', async () => {
    const u = await newUser(t, 'limited');
    for (let i = 0; i < 3; i++)
      expect(
        (await t.post('/v2/auth/login', { body: { email: u.email, password: 'wrong-password' } }))
          .status,
      ).toBe(401);
    const limited = await t.post('/v2/auth/login', {
      body: { email: u.email, password: 'correct-horse-battery' },
    });
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    await t.post('/v2/admin/clock', { ...admin, body: { advance_seconds: 15 * 60 + 1 } });
    expect(
      (
        await t.post('/v2/auth/login', {
          body: { email: u.email, password: 'correct-horse-battery' },
        })
      ).status,
    ).toBe(200);
  });

  it('personal tokens: shown once, listed without the secret, revoked at once; logout revokes the token used', async () => {
    const u = await newUser(t, 'tok');
    const created = await t.post('/v2/user/tokens', {
      token: u.token,
      body: { name: 'ci', expires_in_days: 1 },
    });
    expect(created.status).toBe(201);
    expect(created.json.token).toMatch(/^fp_/);
    const list = await t.get('/v2/user/tokens', { token: created.json.token });
    expect(JSON.stringify(list.json)).not.toContain(created.json.token);
    expect(list.json.data.map((x: any) => x.name)).toContain('ci');
    const stored = await t.db
      .selectFrom('access_tokens')
      .select('token_hash')
      .where('id', '=', created.json.id)
      .executeTakeFirstOrThrow();
    expect(stored.token_hash.toString('utf8')).not.toContain(created.json.token);

    expect((await t.del(`/v2/user/tokens/${created.json.id}`, { token: u.token })).status).toBe(
      204,
    );
    expectProblem(await t.get('/v2/user', { token: created.json.token }), 401, 'unauthorized');

    const other = await t.post('/v2/user/tokens', { token: u.token, body: { name: 'laptop' } });
    expect((await t.post('/v2/auth/logout', { token: other.json.token })).status).toBe(204);
    expectProblem(await t.get('/v2/user', { token: other.json.token }), 401);
    expect((await t.get('/v2/user', { token: u.token })).status).toBe(200);

    const stranger = await newUser(t, 'stranger');
    expectProblem(
      await t.del(`/v2/user/tokens/${created.json.id}`, { token: stranger.token }),
      404,
    );
  });

  it('expires tokens by the service clock', async () => {
    const u = await newUser(t, 'exp');
    const short = await t.post('/v2/user/tokens', {
      token: u.token,
      body: { name: 'short', expires_in_days: 2 },
    });
    expect((await t.get('/v2/user', { token: short.json.token })).status).toBe(200);
    await t.post('/v2/admin/clock', { ...admin, body: { advance_seconds: 2 * 86400 + 1 } });
    const r = await t.get('/v2/user', { token: short.json.token });
    expectProblem(r, 401);
    expect(r.headers['www-authenticate']).toBe('Bearer');
  });

  it('the operator clock needs the admin token', async () => {
    expectProblem(
      await t.post('/v2/admin/clock', { token: 'wrong', body: { advance_seconds: 1 } }),
      401,
    );
    const u = await newUser(t, 'x');
    expectProblem(
      await t.post('/v2/admin/clock', { token: u.token, body: { advance_seconds: 1 } }),
      401,
    );
  });
});

describe('closed sign-up', () => {
  it('admits only invited addresses, and only with proof of the mailbox', async () => {
    const closed = await testApp({ env: { SIGNUP: 'closed' } });
    try {
      expectProblem(
        await closed.post('/v2/auth/signup', {
          body: { email: 'walkin@example.test', password: 'long-enough-pw' },
        }),
        403,
        'signup_closed',
      );
      const ann = await newUser(closed, 'ann');
      const team = await newTeam(closed, ann);
      await closed.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: 'invited@example.test', role: 'member' },
      });
      // Without proof: a link to the invited mailbox, and no account yet (email-verification.test.ts).
      expect(
        (
          await closed.post('/v2/auth/signup', {
            body: { email: 'Invited@example.test', password: 'long-enough-pw' },
          })
        ).status,
      ).toBe(202);
      const token = await invitationToken(closed, 'invited@example.test').catch(() => undefined);
      expect(token).toBeUndefined(); // the newest e-mail is the verification link, not the invitation
      const proof = await closed.db
        .selectFrom('emails')
        .select('sealed_text')
        .where('to_address', '=', 'invited@example.test')
        .orderBy('id')
        .executeTakeFirstOrThrow();
      const invitation = capture(
        /\/invitations\/([A-Za-z0-9_\-.~%]+)/,
        closed.core.sealer.open(proof.sealed_text),
      );
      const r = await closed.post('/v2/auth/signup', {
        body: {
          email: 'Invited@example.test',
          password: 'long-enough-pw',
          invitation_token: decodeURIComponent(invitation),
        },
      });
      expect(r.status, r.text).toBe(201);
    } finally {
      await closed.close();
    }
  });

  it('the test clock does not exist without TEST_CLOCK=1', async () => {
    const prod = await testApp({ env: { TEST_CLOCK: '0' } });
    try {
      expectProblem(
        await prod.post('/v2/admin/clock', {
          token: 'admin-token-for-tests',
          body: { advance_seconds: 1 },
        }),
        404,
      );
    } finally {
      await prod.close();
    }
  });
});

describe('token cache', () => {
  it('a token revoked through one instance is refused at once by another sharing the database', async () => {
    const { testAppOn } = await import('../helpers/app.ts');
    const other = await testAppOn(t.url);
    try {
      const u = await newUser(t, 'two');
      const created = await t.post('/v2/user/tokens', { token: u.token, body: { name: 'shared' } });
      // Both instances have seen (and cached) the token.
      expect((await t.get('/v2/user', { token: created.json.token })).status).toBe(200);
      expect((await other.get('/v2/user', { token: created.json.token })).status).toBe(200);
      expect((await t.del(`/v2/user/tokens/${created.json.id}`, { token: u.token })).status).toBe(
        204,
      );
      expectProblem(await t.get('/v2/user', { token: created.json.token }), 401);
      // The other instance hears of it by NOTIFY within milliseconds.
      const status = await waitFor(
        'the other instance to refuse the revoked token',
        async () => (await other.get('/v2/user', { token: created.json.token })).status,
        { until: (s) => s !== 200, timeoutMs: 2000 },
      );
      expect(status).toBe(401);
    } finally {
      await other.close();
    }
  });
});
