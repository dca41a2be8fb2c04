// Proof of e-mail ownership in a real browser: the verification link's page, and the
// invitation page signing up an invitee whose address an unverified account squats.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { invitationToken, newTeam, newUser } from '../helpers/factories.ts';
import { failedRequests, launchBrowser, listeningApp, openPage } from './browser.ts';
import { screenshots } from './console.ts';
import { capture } from '../helpers/checked.ts';

let t: Awaited<ReturnType<typeof listeningApp>>;
let browser: Browser;
beforeAll(async () => {
  t = await listeningApp();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource/.test(e));

/** The token of the newest verification link e-mailed to `email`. */
async function verificationToken(email: string) {
  const mail = await t.db
    .selectFrom('emails')
    .select('sealed_text')
    .where('to_address', '=', email)
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return decodeURIComponent(
    capture(/\/verify-email#token=([A-Za-z0-9_\-.~%]+)/, t.core.sealer.open(mail.sealed_text)),
  );
}

describe('verification page', () => {
  it('confirms the address with the password, then forgets the token', async () => {
    const email = `dora.${Date.now().toString(36)}@example.test`;
    const s = await t.post('/v2/auth/signup', { body: { email, password: 'dora-long-password' } });
    expect(s.status).toBe(201);
    const token = await verificationToken(email);
    const { page, errors, close } = await openPage(browser);
    await page.goto(`${t.base}/verify-email#token=${encodeURIComponent(token)}`);
    expect(new URL(page.url()).hash).toBe(''); // out of the address bar and the history
    // The wrong password below is a refusal the test provokes: watched from the right one on.
    let failed: string[] = [];

    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Confirm address' }).click();
    await expect.poll(() => page.locator('#message').textContent()).toContain('not the one chosen');
    failed = failedRequests(page);
    await page.getByLabel('Password').fill('dora-long-password');
    await page.getByRole('button', { name: 'Confirm address' }).click();
    await page.locator('#result').waitFor();
    expect(await page.locator('#result').textContent()).toContain(`${email} is confirmed`);
    expect((await t.get('/v2/user', { token: s.json.access_token })).json.email_verified).toBe(
      true,
    );
    await screenshots(page, 'verify-email');
    // The console takes over the page's session: no second sign-in.
    await page.getByRole('link', { name: 'Open the console' }).click();
    await expect.poll(() => page.locator('#signed-in-as').textContent()).toBe(email);
    expect(realErrors(errors)).toEqual([]);
    expect(failed).toEqual([]);
    await close();
  });

  it('says so when the link lacks its token', async () => {
    const { page, errors, close } = await openPage(browser);
    await page.goto(`${t.base}/verify-email`);
    await page.locator('#result').waitFor();
    expect(await page.locator('#result').textContent()).toContain('This link is incomplete');
    expect(await page.getByRole('link', { name: 'Open the console' }).getAttribute('href')).toBe(
      '/console',
    );
    expect(realErrors(errors)).toEqual([]);
    await close();
  });
});

describe('invitation page', () => {
  it('signs up the invitee although an unverified account squats the address, then accepts', async () => {
    const email = `erin.${Date.now().toString(36)}@example.test`;
    const owner = await newUser(t, 'owner');
    const team = await newTeam(t, owner, 'Day Shift');
    expect(
      (
        await t.post(`/v2/teams/${team.id}/invitations`, {
          token: owner.token,
          body: { email, role: 'viewer' },
        })
      ).status,
    ).toBe(201);
    const token = await invitationToken(t, email);
    const squat = await t.post('/v2/auth/signup', {
      body: { email, password: 'squatter-password' },
    });
    expect(squat.status).toBe(201);

    const { page, errors, close } = await openPage(browser);
    await page.goto(`${t.base}/invitations/${encodeURIComponent(token)}`);
    await page.getByRole('button', { name: 'Create an account' }).click();
    const form = page.locator('#signup-form');
    await form.getByLabel('Password').fill('erin-long-password');
    await form.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.locator('#signed-in-email').textContent()).toBe(email);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.locator('#result').waitFor();
    expect(await page.locator('#result').textContent()).toContain(
      'You joined Day Shift as a viewer.',
    );
    expect((await t.get('/v2/user', { token: squat.json.access_token })).status).toBe(401);
    expect(realErrors(errors)).toEqual([]);
    await close();
  });
});
