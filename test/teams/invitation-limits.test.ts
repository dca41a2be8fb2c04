// Issue 12, item 9: invitation mail was a spam relay (25 resends, 26 e-mails). Now at most
// RATE_INVITATION_EMAILS_PER_ADDRESS (10) invitation e-mails go to one address in any 24 hours,
// across all teams, and at most RATE_INVITATION_EMAILS_PER_TEAM (50) leave one team in any hour,
// new invitations and resends alike. Beyond that: 429 with Retry-After and a detail that says
// when, no e-mail queued, nothing changed. Counted in the transaction that queues the e-mail, so
// parallel requests cannot overshoot and a refused or rolled-back request does not count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { testApp, type Reply, type TestApp } from '../helpers/app.ts';
import { expectProblem, newTeam, newUser } from '../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const PER_ADDRESS = 10;
const PER_TEAM = 50;
const ADMIN = 'admin-token-for-tests';
const address = () => `invitee.${randomBytes(5).toString('hex')}@example.test`;
const mailsTo = async (to: string) =>
  (await t.db.selectFrom('emails').select('id').where('to_address', '=', to).execute()).length;
const advance = async (seconds: number) => {
  const r = await t.post('/v2/admin/clock', { token: ADMIN, body: { advance_seconds: seconds } });
  expect(r.status, r.text).toBe(200);
};

function expectLimited(r: Reply, maxSeconds: number) {
  expectProblem(r, 429, 'rate_limited');
  const retry = Number(r.headers['retry-after']);
  expect(retry).toBeGreaterThan(0);
  expect(retry).toBeLessThanOrEqual(maxSeconds);
  // The detail names the moment and the wait.
  const when = /Try again after (\S+Z) \(in (\d+) seconds\)/.exec(r.json.detail);
  expect(when, r.json.detail).not.toBeNull();
  expect(Number(when![2])).toBe(retry);
  const until = Date.parse(when![1]!);
  expect(Math.abs(until - (t.clock.now().getTime() + retry * 1000))).toBeLessThan(5000);
}

describe('invitation e-mail limits', () => {
  it(`a resend loop stops at ${PER_ADDRESS} e-mails per address per day: 429, Retry-After, no more mail`, async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const to = address();
    const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: to, role: 'viewer' },
    });
    expect(inv.status, inv.text).toBe(201);
    const statuses: number[] = [];
    let limited: Reply | undefined;
    for (let i = 0; i < 25; i++) {
      const r = await t.post(`/v2/teams/${team.id}/invitations/${inv.json.id}/resend`, {
        token: ann.token,
      });
      statuses.push(r.status);
      if (r.status === 429) limited ??= r;
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(PER_ADDRESS - 1);
    expect(
      statuses.slice(PER_ADDRESS - 1).every((s) => s === 429),
      statuses.join(','),
    ).toBe(true);
    expectLimited(limited!, 86400);
    expect(limited!.json.detail).toContain(
      `${to} has been sent ${PER_ADDRESS} invitation e-mails in the last 24 hours`,
    );
    expect(await mailsTo(to)).toBe(PER_ADDRESS);
    // Refused resends changed nothing: one audit record per e-mail.
    const resent = await t.db
      .selectFrom('audit_events')
      .select('id')
      .where('target_id', '=', inv.json.id)
      .where('action', '=', 'invitation.resent')
      .execute();
    expect(resent).toHaveLength(PER_ADDRESS - 1);

    // Another team cannot reach the address either: the limit is per address, across teams.
    const other = await newTeam(t, ann);
    expectLimited(
      await t.post(`/v2/teams/${other.id}/invitations`, {
        token: ann.token,
        body: { email: to, role: 'viewer' },
      }),
      86400,
    );
    expect(
      await t.db.selectFrom('invitations').select('id').where('team_id', '=', other.id).execute(),
    ).toEqual([]);

    // After Retry-After, one more goes.
    await advance(Number(limited!.headers['retry-after']) + 1);
    expect(
      (await t.post(`/v2/teams/${team.id}/invitations/${inv.json.id}/resend`, { token: ann.token }))
        .status,
    ).toBe(200);
    expect(await mailsTo(to)).toBe(PER_ADDRESS + 1);
  });

  it(`a team sends at most ${PER_TEAM} invitation e-mails in an hour`, async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const invite = () =>
      t.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: address(), role: 'member' },
      });
    const first = await invite();
    expect(first.status).toBe(201);
    for (let i = 1; i < PER_TEAM; i++) expect((await invite()).status).toBe(201);
    const over = await invite();
    expectLimited(over, 3600);
    expect(over.json.detail).toContain(
      `this team has sent ${PER_TEAM} invitation e-mails in the last hour`,
    );
    // A resend counts too.
    expectLimited(
      await t.post(`/v2/teams/${team.id}/invitations/${first.json.id}/resend`, {
        token: ann.token,
      }),
      3600,
    );
    const invitations = await t.db
      .selectFrom('invitations')
      .select('id')
      .where('team_id', '=', team.id)
      .execute();
    expect(invitations).toHaveLength(PER_TEAM);
    // Another team is not affected.
    const other = await newTeam(t, ann);
    expect(
      (
        await t.post(`/v2/teams/${other.id}/invitations`, {
          token: ann.token,
          body: { email: address(), role: 'member' },
        })
      ).status,
    ).toBe(201);
    await advance(3601);
    expect((await invite()).status).toBe(201);
  });

  it('parallel resends cannot overshoot the limit', async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const to = address();
    const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: to, role: 'viewer' },
    });
    const rs = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.post(`/v2/teams/${team.id}/invitations/${inv.json.id}/resend`, { token: ann.token }),
      ),
    );
    expect(rs.filter((r) => r.status === 200)).toHaveLength(PER_ADDRESS - 1);
    for (const r of rs.filter((x) => x.status !== 200)) expectProblem(r, 429, 'rate_limited');
    expect(await mailsTo(to)).toBe(PER_ADDRESS);
  });

  it('a refused invitation (already a member, open invitation) does not count', async () => {
    const ann = await newUser(t, 'ann');
    const team = await newTeam(t, ann);
    const to = address();
    expect(
      (
        await t.post(`/v2/teams/${team.id}/invitations`, {
          token: ann.token,
          body: { email: to, role: 'viewer' },
        })
      ).status,
    ).toBe(201);
    for (let i = 0; i < 15; i++) {
      expect(
        (
          await t.post(`/v2/teams/${team.id}/invitations`, {
            token: ann.token,
            body: { email: to, role: 'viewer' },
          })
        ).status,
      ).toBe(409);
    }
    const logged = await t.db
      .selectFrom('invitation_emails')
      .select('id')
      .where('email', '=', to)
      .execute();
    expect(logged).toHaveLength(1);
    expect(await mailsTo(to)).toBe(1);
  });
});

describe('invitation e-mail limits from the environment', () => {
  it('RATE_INVITATION_EMAILS_PER_TEAM and RATE_INVITATION_EMAILS_PER_ADDRESS set the limits', async () => {
    const t2 = await testApp({
      env: { RATE_INVITATION_EMAILS_PER_TEAM: '3', RATE_INVITATION_EMAILS_PER_ADDRESS: '2' },
    });
    try {
      expect(t2.config.rateLimits).toMatchObject({
        invitationEmailsPerTeam: 3,
        invitationEmailsPerAddress: 2,
      });
      const ann = await newUser(t2, 'ann');
      const team = await newTeam(t2, ann);
      const inv = await t2.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: address(), role: 'viewer' },
      });
      expect(
        (
          await t2.post(`/v2/teams/${team.id}/invitations/${inv.json.id}/resend`, {
            token: ann.token,
          })
        ).status,
      ).toBe(200);
      expectProblem(
        await t2.post(`/v2/teams/${team.id}/invitations/${inv.json.id}/resend`, {
          token: ann.token,
        }),
        429,
        'rate_limited',
      );
      expect(
        (
          await t2.post(`/v2/teams/${team.id}/invitations`, {
            token: ann.token,
            body: { email: address(), role: 'viewer' },
          })
        ).status,
      ).toBe(201);
      expectProblem(
        await t2.post(`/v2/teams/${team.id}/invitations`, {
          token: ann.token,
          body: { email: address(), role: 'viewer' },
        }),
        429,
        'rate_limited',
      );
    } finally {
      await t2.close();
    }
  });
});
