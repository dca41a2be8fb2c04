// Answering an invitation by its id (POST /v2/user/invitations/<id>/accept|decline): only an
// account whose address is proven, only its own open invitations, either kind; whatever else is
// 404, as the list would not have shown it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem, newTeam, newUser, type TestUser } from '../helpers/factories.ts';
import { newOrg } from '../helpers/orgs.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

const prove = (u: TestUser) =>
  t.db
    .updateTable('users')
    .set({ email_verified_at: t.clock.now() })
    .where('id', '=', u.id)
    .execute();

async function invite(by: TestUser, path: string, email: string, role = 'member') {
  const r = await t.post(`${path}/invitations`, { token: by.token, body: { email, role } });
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}

const answer = (who: TestUser, id: string, what: 'accept' | 'decline') =>
  t.post(`/v2/user/invitations/${id}/${what}`, { token: who.token });

describe('answering an invitation by id', () => {
  it('needs a proven address, then joins once, with the audit row', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const team = await newTeam(t, ann);
    const id = await invite(ann, `/v2/teams/${team.id}`, bob.email, 'viewer');
    // Unproven: the list is empty, and so is what may be answered.
    expectProblem(await answer(bob, id, 'accept'), 404, 'invitation_not_found');
    await prove(bob);
    const ok = await answer(bob, id, 'accept');
    expect(ok.status, ok.text).toBe(204);
    expectProblem(await answer(bob, id, 'accept'), 404);
    const teams = await t.get('/v2/teams', { token: bob.token });
    expect(teams.json.data[0]).toMatchObject({ id: team.id, role: 'viewer' });
    expect((await t.get('/v2/user/invitations', { token: bob.token })).json.data).toEqual([]);
    const audit = await t.get(`/v2/teams/${team.id}/audit`, { token: ann.token });
    expect(audit.json.data.map((e: { action: string }) => e.action)).toContain(
      'invitation.accepted',
    );
  });

  it("refuses someone else's invitation, and an expired one", async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const eve = await newUser(t, 'eve');
    await prove(bob);
    await prove(eve);
    const team = await newTeam(t, ann);
    const id = await invite(ann, `/v2/teams/${team.id}`, bob.email);
    expectProblem(await answer(eve, id, 'accept'), 404);
    expectProblem(await answer(eve, id, 'decline'), 404);
    await t.post('/v2/admin/clock', {
      token: 'admin-token-for-tests',
      body: { advance_seconds: 7 * 86400 + 1 },
    });
    expectProblem(await answer(bob, id, 'accept'), 404);
  });

  it('declines: the invitation shows as revoked to the team and leaves the list', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    await prove(bob);
    const team = await newTeam(t, ann);
    const id = await invite(ann, `/v2/teams/${team.id}`, bob.email);
    const no = await answer(bob, id, 'decline');
    expect(no.status, no.text).toBe(204);
    const list = await t.get(`/v2/teams/${team.id}/invitations`, { token: ann.token });
    expect(list.json.data.find((i: { id: string }) => i.id === id).status).toBe('revoked');
    expect((await t.get('/v2/user/invitations', { token: bob.token })).json.data).toEqual([]);
    expectProblem(await answer(bob, id, 'accept'), 404);
  });

  it("joins an organization the same way, at the invitation's role", async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    await prove(bob);
    const org = await newOrg(t, ann);
    const id = await invite(ann, `/v2/orgs/${org.id}`, bob.email, 'admin');
    const mine = await t.get('/v2/user/invitations', { token: bob.token });
    expect(mine.json.data[0]).toMatchObject({ id, kind: 'org' });
    expect((await answer(bob, id, 'accept')).status).toBe(204);
    const orgs = await t.get('/v2/orgs', { token: bob.token });
    expect(orgs.json.data[0]).toMatchObject({ id: org.id, role: 'admin' });
  });
});
