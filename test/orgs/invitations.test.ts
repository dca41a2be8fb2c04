// Org invitations (CONTRACT 3a): the team invitation mechanism for kind org — same rules, link,
// expiry, e-mail match, resend, decline and accept — on /v2/orgs routes, and tokens that are
// unknown on the other kind's routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, invitationToken, newTeam, newUser } from '../helpers/factories.ts';
import { addOrgMember, newOrg } from '../helpers/orgs.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const verify = (userId: string) =>
  t.db
    .updateTable('users')
    .set({ email_verified_at: t.clock.now() })
    .where('id', '=', userId)
    .execute();

async function newestMail(email: string) {
  const mail = await t.db
    .selectFrom('emails')
    .selectAll()
    .where('to_address', '=', email.toLowerCase())
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return t.core.sealer.open(mail.sealed_text);
}

describe('org invitations', () => {
  it('invites by e-mail to an organization; the invitee sees it, accepts once, and is a member', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const org = await newOrg(t, ann, { name: 'Acme Org' });
    const inv = await t.post(`/v2/orgs/${org.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email.toUpperCase(), role: 'admin' },
    });
    expect(inv.status, inv.text).toBe(201);
    expect(inv.json).toMatchObject({
      org_id: org.id,
      email: bob.email,
      role: 'admin',
      status: 'pending',
      invited_by: ann.id,
    });
    expect(inv.json.team_id).toBeUndefined();
    expect(await newestMail(bob.email)).toContain('to join the organization "Acme Org"');
    const token = await invitationToken(t, bob.email);

    const page = await t.request('GET', `/invitations/${encodeURIComponent(token)}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<dt>Organization</dt>');
    expect(page.text).toContain('data-kind="org"');

    await verify(bob.id);
    const mine = await t.get('/v2/user/invitations', { token: bob.token });
    expect(mine.json.data).toEqual([
      expect.objectContaining({
        id: inv.json.id,
        kind: 'org',
        team: { id: org.id, name: 'Acme Org', slug: org.slug },
      }),
    ]);

    const ok = await t.post(`/v2/orgs/invitations/${token}/accept`, { token: bob.token });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ org_id: org.id, user_id: bob.id, role: 'admin' });
    expectProblem(
      await t.post(`/v2/orgs/invitations/${token}/accept`, { token: bob.token }),
      409,
      'invitation_used',
    );
    const orgs = await t.get('/v2/orgs', { token: bob.token });
    expect(orgs.json.data).toEqual([
      expect.objectContaining({ id: org.id, role: 'admin', member_count: 2 }),
    ]);
    expect((await t.get('/v2/teams', { token: bob.token })).json.data).toEqual([]);
    const listed = await t.get(`/v2/orgs/${org.id}/invitations`, { token: ann.token });
    expect(listed.json.data).toEqual([
      expect.objectContaining({ id: inv.json.id, org_id: org.id, status: 'accepted' }),
    ]);
  });

  it('offers member and admin only, to admins only, never to a member already in', async () => {
    const ann = await newUser(t, 'ann');
    const mem = await newUser(t, 'mem');
    const out = await newUser(t, 'out');
    const org = await newOrg(t, ann);
    await addOrgMember(t, org.id, mem, 'member');
    for (const role of ['viewer', 'owner'])
      expectProblem(
        await t.post(`/v2/orgs/${org.id}/invitations`, {
          token: ann.token,
          body: { email: 'x@example.test', role },
        }),
        422,
        'role_not_allowed',
      );
    expectProblem(
      await t.post(`/v2/orgs/${org.id}/invitations`, {
        token: mem.token,
        body: { email: 'x@example.test', role: 'member' },
      }),
      403,
      'insufficient_role',
    );
    expectProblem(
      await t.post(`/v2/orgs/${org.id}/invitations`, {
        token: out.token,
        body: { email: 'x@example.test', role: 'member' },
      }),
      404,
      'org_not_found',
    );
    expectProblem(
      await t.post(`/v2/orgs/${org.id}/invitations`, {
        token: ann.token,
        body: { email: mem.email, role: 'admin' },
      }),
      409,
      'already_member',
    );
    const first = await t.post(`/v2/orgs/${org.id}/invitations`, {
      token: ann.token,
      body: { email: out.email, role: 'member' },
    });
    expect(first.status).toBe(201);
    expectProblem(
      await t.post(`/v2/orgs/${org.id}/invitations`, {
        token: ann.token,
        body: { email: out.email, role: 'member' },
      }),
      409,
      'invitation_exists',
    );
  });

  it("a team's token is unknown on the org routes and an org's on the team routes", async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const cat = await newUser(t, 'cat');
    const team = await newTeam(t, ann);
    const org = await newOrg(t, ann);
    await t.post(`/v2/teams/${team.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'member' },
    });
    const teamToken = await invitationToken(t, bob.email);
    await t.post(`/v2/orgs/${org.id}/invitations`, {
      token: ann.token,
      body: { email: cat.email, role: 'member' },
    });
    const orgToken = await invitationToken(t, cat.email);
    for (const [path, who] of [
      [`/v2/orgs/invitations/${teamToken}`, bob],
      [`/v2/teams/invitations/${orgToken}`, cat],
    ] as const) {
      expectProblem(
        await t.post(`${path}/accept`, { token: who.token }),
        404,
        'invitation_not_found',
      );
      expectProblem(await t.post(`${path}/decline`), 404, 'invitation_not_found');
    }
    // Both are still open on their own routes.
    expect(
      (await t.post(`/v2/teams/invitations/${teamToken}/accept`, { token: bob.token })).status,
    ).toBe(200);
    expect(
      (await t.post(`/v2/orgs/invitations/${orgToken}/accept`, { token: cat.token })).status,
    ).toBe(200);
    // An invitation id of one kind is not found under the other kind's id.
    const invs = await t.db
      .selectFrom('invitations')
      .select(['id', 'team_id'])
      .where('team_id', '=', org.id)
      .execute();
    expectProblem(
      await t.post(`/v2/teams/${team.id}/invitations/${invs[0]?.id}/resend`, { token: ann.token }),
      404,
    );
  });

  it('matches the e-mail, expires, resends with a new link, declines and revokes as a team does', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const eve = await newUser(t, 'eve');
    const org = await newOrg(t, ann);
    const inv = await t.post(`/v2/orgs/${org.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'member' },
    });
    const first = await invitationToken(t, bob.email);
    expectProblem(
      await t.post(`/v2/orgs/invitations/${first}/accept`, { token: eve.token }),
      403,
      'email_mismatch',
    );

    const resent = await t.post(`/v2/orgs/${org.id}/invitations/${inv.json.id}/resend`, {
      token: ann.token,
    });
    expect(resent.status, resent.text).toBe(200);
    expect(resent.json).toMatchObject({ id: inv.json.id, org_id: org.id, status: 'pending' });
    const second = await invitationToken(t, bob.email);
    expect(second).not.toBe(first);
    expectProblem(await t.post(`/v2/orgs/invitations/${first}/accept`, { token: bob.token }), 404);

    await t.post('/v2/admin/clock', {
      token: 'admin-token-for-tests',
      body: { advance_seconds: 7 * 86400 + 1 },
    });
    expectProblem(
      await t.post(`/v2/orgs/invitations/${second}/accept`, { token: bob.token }),
      410,
      'invitation_expired',
    );
    await t.post(`/v2/orgs/${org.id}/invitations/${inv.json.id}/resend`, { token: ann.token });
    const third = await invitationToken(t, bob.email);
    const declined = await t.post(`/v2/orgs/invitations/${third}/decline`);
    expect(declined.status, declined.text).toBe(204);
    expectProblem(await t.post(`/v2/orgs/invitations/${third}/accept`, { token: bob.token }), 404);
    expectProblem(
      await t.post(`/v2/orgs/${org.id}/invitations/${inv.json.id}/resend`, { token: ann.token }),
      409,
      'invitation_revoked',
    );

    const again = await t.post(`/v2/orgs/${org.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'member' },
    });
    expect(again.status, again.text).toBe(201);
    const fourth = await invitationToken(t, bob.email);
    const revoked = await t.del(`/v2/orgs/${org.id}/invitations/${again.json.id}`, {
      token: ann.token,
    });
    expect(revoked.status).toBe(204);
    expectProblem(await t.post(`/v2/orgs/invitations/${fourth}/accept`, { token: bob.token }), 404);
    const audit = await t.db
      .selectFrom('audit_events')
      .select('action')
      .where('team_id', '=', org.id)
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual([
      'invitation.created',
      'invitation.resent',
      'invitation.resent',
      'invitation.declined',
      'invitation.created',
      'invitation.revoked',
    ]);
  });

  it('20 parallel accepts of one invitation make exactly one membership', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const org = await newOrg(t, ann);
    await t.post(`/v2/orgs/${org.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'member' },
    });
    const token = await invitationToken(t, bob.email);
    const rs = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.post(`/v2/orgs/invitations/${token}/accept`, { token: bob.token }),
      ),
    );
    const statuses = rs.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 200),
      statuses.join(),
    ).toHaveLength(1);
    for (const r of rs.filter((x) => x.status !== 200)) expectProblem(r, 409, 'invitation_used');
    const rows = await t.db
      .selectFrom('team_members')
      .select('role')
      .where('team_id', '=', org.id)
      .where('user_id', '=', bob.id)
      .execute();
    expect(rows).toEqual([{ role: 'member' }]);
    const accepted = await t.db
      .selectFrom('audit_events')
      .select('id')
      .where('team_id', '=', org.id)
      .where('action', '=', 'invitation.accepted')
      .execute();
    expect(accepted).toHaveLength(1);
  });
});
