// Races over one address: whatever runs at once, one account holds the
// address, a proven holder is never displaced, and a link is used once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { testApp, type TestApp } from '../helpers/app.ts';
import { invitationToken, newTeam, newUser } from '../helpers/factories.ts';
import { at } from '../helpers/checked.ts';

const LINK = /\/verify-email#token=([A-Za-z0-9_\-.~%]+)/;
const address = (name: string) => `${name}.${randomBytes(4).toString('hex')}@example.test`;

let t: TestApp;
beforeAll(async () => {
  t = await testApp({
    env: { RATE_SIGNUPS_PER_IP: '10000', RATE_VERIFICATION_EMAILS_PER_ADDRESS: '100' },
  });
});
afterAll(async () => {
  await t.close();
});

/** Every verification link in the outbox for `email`, oldest first. */
async function links(email: string): Promise<string[]> {
  const mails = await t.db
    .selectFrom('emails')
    .select('sealed_text')
    .where('to_address', '=', email)
    .orderBy('id')
    .execute();
  return mails
    .map((m) => LINK.exec(t.core.sealer.open(m.sealed_text))?.[1])
    .filter(Boolean)
    .map((l) => decodeURIComponent(l!));
}

const holders = (email: string) =>
  t.db.selectFrom('users').select(['id', 'email_verified_at']).where('email', '=', email).execute();

const verify = (token: string, password: string) =>
  t.post('/v2/auth/verify-email', { body: { token, password } });

describe('races over one address', () => {
  it('one link followed 10 times at once verifies once', async () => {
    const email = address('once');
    expect(
      (await t.post('/v2/auth/signup', { body: { email, password: 'once-long-password' } })).status,
    ).toBe(201);
    const link = at(await links(email), 0);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => verify(link, 'once-long-password')),
    );
    const codes = results.map((r) => r.status);
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status !== 200)
        .every((r) => r.status === 409 && r.json.code === 'verification_used'),
    ).toBe(true);
  });

  it('several take-overs of a squatted address at once: exactly one account wins and keeps it', async () => {
    const email = address('contested');
    const squat = await t.post('/v2/auth/signup', {
      body: { email, password: 'squatter-password' },
    });
    expect(squat.status).toBe(201);
    for (let i = 0; i < 6; i++) {
      expect(
        (await t.post('/v2/auth/signup', { body: { email, password: `claimant-${i}-password` } }))
          .status,
      ).toBe(202);
    }
    const claims = (await links(email)).slice(1); // the first is the squatter's own link
    expect(claims).toHaveLength(6);
    const results = await Promise.all(
      claims.map((link, i) => verify(link, `claimant-${i}-password`)),
    );
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    expect(
      results
        .filter((r) => r.status !== 200)
        .every((r) => r.status === 409 && r.json.code === 'email_taken'),
    ).toBe(true);
    const now = await holders(email);
    expect(now).toHaveLength(1);
    expect(at(now, 0).id).toBe(at(won, 0).json.user.id);
    expect(at(now, 0).email_verified_at).not.toBeNull();
  });

  it('the holder proving its address while an invitee takes it over: one of them, never both', async () => {
    for (let round = 0; round < 8; round++) {
      const email = address(`duel${round}`);
      const owner = await newUser(t, 'owner');
      const team = await newTeam(t, owner);
      expect(
        (
          await t.post(`/v2/teams/${team.id}/invitations`, {
            token: owner.token,
            body: { email, role: 'member' },
          })
        ).status,
      ).toBe(201);
      const invitation = await invitationToken(t, email);
      const holder = await t.post('/v2/auth/signup', {
        body: { email, password: 'holder-long-password' },
      });
      const holderLink = at(await links(email), 0);
      const [proved, tookOver] = await Promise.all([
        verify(holderLink, 'holder-long-password'),
        t.post('/v2/auth/signup', {
          body: { email, password: 'invitee-password', invitation_token: invitation },
        }),
      ]);
      const now = await holders(email);
      expect(now).toHaveLength(1);
      expect(at(now, 0).email_verified_at).not.toBeNull();
      if (proved.status === 200) {
        expect(tookOver.status, tookOver.text).toBe(409);
        expect(at(now, 0).id).toBe(holder.json.user.id);
      } else {
        expect(proved.json.code, proved.text).toBe('email_taken');
        expect(tookOver.status, tookOver.text).toBe(201);
        expect(at(now, 0).id).toBe(tookOver.json.user.id);
      }
    }
  });

  it('plain sign-ups of one new address at once: one account, the others wait for proof (202)', async () => {
    const email = address('rush');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.post('/v2/auth/signup', { body: { email, password: `rush-${i}-long-password` } }),
      ),
    );
    // The first creates the (unverified) account; the rest find it and wait for proof.
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 201).every((r) => r.status === 202)).toBe(true);
    expect(await holders(email)).toHaveLength(1);
  });
});
