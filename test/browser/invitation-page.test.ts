// The invitation page end to end: a real browser opens the link from the e-mail, signs in or
// up, and accepts or declines; the API then confirms what happened.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  FACTORY_PASSWORD,
  invitationToken,
  newTeam,
  newUser,
  type TestUser,
} from '../helpers/factories.ts';
import { launchBrowser, listeningApp, openPage } from './browser.ts';

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

/** A team owned by a fresh user, and an invitation of `email` to it; returns the e-mailed token. */
async function invite(
  email: string,
  role: 'viewer' | 'member' | 'admin',
  teamName = 'Acme Studio',
) {
  const owner = await newUser(t, 'owner');
  const team = await newTeam(t, owner, teamName);
  const r = await t.post(`/v2/teams/${team.id}/invitations`, {
    token: owner.token,
    body: { email, role },
  });
  expect(r.status, r.text).toBe(201);
  return {
    owner,
    team,
    invitation: r.json as { id: string },
    token: await invitationToken(t, email),
  };
}

const link = (token: string) => `${t.base}/invitations/${encodeURIComponent(token)}`;
const realErrors = (errors: string[]) => errors.filter((e) => !/Failed to load resource/.test(e));

async function members(owner: TestUser, teamId: string) {
  const r = await t.get(`/v2/teams/${teamId}/members`, { token: owner.token });
  expect(r.status, r.text).toBe(200);
  return r.json.data as { user_id: string; email: string; role: string }[];
}

async function signIn(page: Page, email: string) {
  const form = page.locator('#login-form');
  await form.getByLabel('E-mail').fill(email);
  await form.getByLabel('Password').fill(FACTORY_PASSWORD);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.locator('#signed-in-email').textContent()).toBe(email);
}

describe('invitation page', () => {
  it('shows team, role and address; the invitee signs in and accepts', async () => {
    const bob = await newUser(t, 'bob');
    const { owner, team, token } = await invite(bob.email, 'admin', 'Acme <Studio> & "Friends"');
    const { page, errors, close } = await openPage(browser);

    const res = await page.goto(link(token));
    expect(res?.status()).toBe(200);
    const headers = res!.headers();
    expect(headers['cache-control']).toBe('no-store');
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    // The team name is shown as text, not parsed as markup.
    await expect
      .poll(() => page.locator('h1').textContent())
      .toBe('Join Acme <Studio> & "Friends"');
    expect(await page.locator('#fact-team').textContent()).toBe('Acme <Studio> & "Friends"');
    expect(await page.locator('#fact-role').textContent()).toBe('Admin');
    expect(await page.locator('#fact-email').textContent()).toBe(bob.email);
    expect(await page.locator('#fact-status').textContent()).toContain('Pending');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.locator('#login-form').getByLabel('E-mail').inputValue()).toBe(bob.email);
    // The stylesheet and the script loaded under the CSP (the form is shown by the script).
    expect(await page.evaluate(() => getComputedStyle(document.body).display)).toBe('flex');
    await page.screenshot({ path: '/tmp/invitation-page.png', fullPage: true });

    await signIn(page, bob.email);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.locator('#result').waitFor();
    expect(await page.locator('#result').textContent()).toContain(
      'You joined Acme <Studio> & "Friends" as an admin.',
    );
    expect((await page.locator('#fact-status').textContent())?.trim()).toBe('Accepted');

    // The token is kept for the tab only.
    const stored = await page.evaluate(() => ({
      session: sessionStorage.getItem('frameplane.session'),
      local: localStorage.length,
      cookies: document.cookie,
    }));
    expect(JSON.parse(stored.session!).access_token).toMatch(/\S{20,}/);
    expect(stored.local).toBe(0);
    expect(stored.cookies).toBe('');

    const list = await members(owner, team.id);
    expect(list.find((m) => m.user_id === bob.id)?.role).toBe('admin');

    // Used once: opened again, the page says so and offers no buttons.
    await page.reload();
    expect(await page.locator('#closed-notice').textContent()).toContain('already been accepted');
    expect(await page.getByRole('button').count()).toBe(0);
    expect(realErrors(errors)).toEqual([]);
    await close();
  });

  it('tells a different account to sign in with the invited address, and adds nobody', async () => {
    const bob = await newUser(t, 'bob');
    const eve = await newUser(t, 'eve');
    const { owner, team, token, invitation } = await invite(bob.email, 'member');
    const { page, errors, close } = await openPage(browser);

    await page.goto(link(token));
    await signIn(page, eve.email);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = await alert.textContent();
    expect(text).toContain('sign in with that address');
    expect(text).toContain(bob.email);
    expect(await page.locator('#result').isHidden()).toBe(true);

    const list = await members(owner, team.id);
    expect(list.map((m) => m.user_id)).not.toContain(eve.id);
    const invs = await t.get(`/v2/teams/${team.id}/invitations`, { token: owner.token });
    expect(invs.json.data.find((i: { id: string }) => i.id === invitation.id).status).toBe(
      'pending',
    );

    // Switching accounts fixes it.
    await page.getByRole('button', { name: 'Use another account' }).click();
    expect(await page.locator('#login-form').getByLabel('E-mail').inputValue()).toBe(bob.email);
    await signIn(page, bob.email);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.locator('#result').waitFor();
    expect((await members(owner, team.id)).find((m) => m.user_id === bob.id)?.role).toBe('member');
    expect(realErrors(errors)).toEqual([]);
    await close();
  });

  it('declines: the invitation becomes revoked and the page says so', async () => {
    const bob = await newUser(t, 'bob');
    const { owner, team, token, invitation } = await invite(bob.email, 'viewer');
    const { page, errors, close } = await openPage(browser);

    await page.goto(link(token));
    await page.getByRole('button', { name: 'Decline the invitation' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click(); // a second thought first
    await page.getByRole('button', { name: 'Decline the invitation' }).click();
    await page.getByRole('button', { name: 'Yes, decline' }).click();
    await page.locator('#result').waitFor();
    expect(await page.locator('#result').textContent()).toContain(
      'You declined the invitation to join Acme Studio',
    );

    const invs = await t.get(`/v2/teams/${team.id}/invitations`, { token: owner.token });
    expect(invs.json.data.find((i: { id: string }) => i.id === invitation.id).status).toBe(
      'revoked',
    );
    expect((await members(owner, team.id)).map((m) => m.user_id)).not.toContain(bob.id);

    const again = await page.reload();
    expect(again?.status()).toBe(200);
    expect(await page.locator('#closed-notice').textContent()).toContain('taken back or declined');
    expect(await page.getByRole('button').count()).toBe(0);
    expect(realErrors(errors)).toEqual([]);
    await close();
  });

  it('answers an unknown token with a 404 page', async () => {
    const { page, errors, close } = await openPage(browser);
    const res = await page.goto(`${t.base}/invitations/inv_no-such-token`);
    expect(res?.status()).toBe(404);
    expect(res?.headers()['content-type']).toContain('text/html');
    expect(res?.headers()['cache-control']).toBe('no-store');
    expect(await page.locator('h1').textContent()).toBe('Invitation not found');
    expect(await page.locator('#closed-notice').textContent()).toContain(
      'does not exist or was taken back',
    );
    expect(await page.getByRole('button').count()).toBe(0);
    expect(realErrors(errors)).toEqual([]);
    await close();
  });

  it('signs up with the invited address, then accepts', async () => {
    const email = `carol.${Date.now().toString(36)}@example.test`;
    const { owner, team, token } = await invite(email, 'member', 'Night Shift');
    const { page, errors, close } = await openPage(browser);

    await page.goto(link(token));
    await page.getByRole('button', { name: 'Create an account' }).click();
    const form = page.locator('#signup-form');
    expect(await form.getByLabel('E-mail').inputValue()).toBe(email);
    await form.getByLabel('Your name').fill('Carol');
    await form.getByLabel('Password').fill('a-long-enough-password');
    await form.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.locator('#signed-in-email').textContent()).toBe(email);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.locator('#result').waitFor();
    expect(await page.locator('#result').textContent()).toContain(
      'You joined Night Shift as a member.',
    );

    const carol = (await members(owner, team.id)).find((m) => m.email === email);
    expect(carol?.role).toBe('member');
    expect(realErrors(errors)).toEqual([]);
    await close();
  });
});
