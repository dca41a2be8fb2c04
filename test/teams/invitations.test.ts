import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, invitationToken, newTeam, newUser } from '../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe('invitations', () => {
  it('invites by e-mail and the invitee accepts once, matching case-insensitively', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const team = await newTeam(t, ann);
    const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email.toUpperCase(), role: 'member' },
    });
    expect(inv.status, inv.text).toBe(201);
    expect(inv.json).toMatchObject({
      email: bob.email,
      role: 'member',
      status: 'pending',
      invited_by: ann.id,
    });
    expect(JSON.stringify(inv.json)).not.toMatch(/inv_[A-Za-z0-9_-]{40}/); // no token in the answer
    const token = await invitationToken(t, bob.email);

    // Invitations show only to an account that proved its address (test/identity/email-verification.test.ts).
    expect((await t.get('/v2/user/invitations', { token: bob.token })).json.data).toEqual([]);
    await t.db
      .updateTable('users')
      .set({ email_verified_at: t.clock.now() })
      .where('id', '=', bob.id)
      .execute();
    const mine = await t.get('/v2/user/invitations', { token: bob.token });
    expect(mine.json.data.map((i: any) => i.id)).toEqual([inv.json.id]);

    const ok = await t.post(`/v2/teams/invitations/${token}/accept`, { token: bob.token });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ team_id: team.id, user_id: bob.id, role: 'member' });
    expectProblem(
      await t.post(`/v2/teams/invitations/${token}/accept`, { token: bob.token }),
      409,
      'invitation_used',
    );

    const list = await t.get('/v2/teams', { token: bob.token });
    expect(list.json.data[0]).toMatchObject({ id: team.id, role: 'member', member_count: 2 });
  });

  it('refuses role owner, a wrong account, an expired link, a revoked link', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const eve = await newUser(t, 'eve');
    const team = await newTeam(t, ann);
    expectProblem(
      await t.post(`/v2/teams/${team.id}/invitations`, {
        token: ann.token,
        body: { email: bob.email, role: 'owner' },
      }),
      422,
      'role_not_allowed',
    );

    const inv = await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'viewer' },
    });
    const token = await invitationToken(t, bob.email);
    expectProblem(
      await t.post(`/v2/teams/invitations/${token}/accept`, { token: eve.token }),
      403,
      'email_mismatch',
    );
    expectProblem(
      await t.post(`/v2/teams/invitations/not-a-token/accept`, { token: bob.token }),
      404,
    );

    await t.post('/v2/admin/clock', {
      token: 'admin-token-for-tests',
      body: { advance_seconds: 7 * 86400 + 1 },
    });
    expectProblem(
      await t.post(`/v2/teams/invitations/${token}/accept`, { token: bob.token }),
      410,
      'invitation_expired',
    );
    const listed = await t.get(`/v2/teams/${team.id}/invitations`, { token: ann.token });
    expect(listed.json.data.find((i: any) => i.id === inv.json.id).status).toBe('expired');

    // Resend: a new token and 7 new days; the old token is dead.
    const again = await t.post(`/v2/teams/${team.id}/invitations/${inv.json.id}/resend`, {
      token: ann.token,
    });
    expect(again.status, again.text).toBe(200);
    expect(again.json.status).toBe('pending');
    const fresh = await invitationToken(t, bob.email);
    expect(fresh).not.toBe(token);
    expectProblem(await t.post(`/v2/teams/invitations/${token}/accept`, { token: bob.token }), 404);

    expect(
      (await t.del(`/v2/teams/${team.id}/invitations/${inv.json.id}`, { token: ann.token })).status,
    ).toBe(204);
    expectProblem(await t.post(`/v2/teams/invitations/${fresh}/accept`, { token: bob.token }), 404);
  });

  it('20 parallel accepts of one invitation give exactly one 200', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const team = await newTeam(t, ann);
    await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'member' },
    });
    const token = await invitationToken(t, bob.email);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.post(`/v2/teams/invitations/${token}/accept`, { token: bob.token }),
      ),
    );
    const codes = results.map((r) => r.status).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(codes.filter((c) => c !== 200).every((c) => c === 409)).toBe(true);
    const members = await t.get(`/v2/teams/${team.id}/members`, { token: ann.token });
    expect(members.json.data).toHaveLength(2);
  });
});
