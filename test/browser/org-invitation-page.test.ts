// The invitation page for an organization (CONTRACT 3a): it names the organization, and its
// answer goes to the org routes, so accepting makes an org membership.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { FACTORY_PASSWORD, invitationToken, newUser } from '../helpers/factories.ts';
import { newOrg } from '../helpers/orgs.ts';
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

describe('org invitation page', () => {
  it('names the organization; the invitee signs in, accepts and is an org member', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const org = await newOrg(t, ann, { name: 'Acme Org' });
    const r = await t.post(`/v2/orgs/${org.id}/invitations`, {
      token: ann.token,
      body: { email: bob.email, role: 'member' },
    });
    expect(r.status, r.text).toBe(201);
    const token = await invitationToken(t, bob.email);
    const { page, errors, close } = await openPage(browser);
    const res = await page.goto(`${t.base}/invitations/${encodeURIComponent(token)}`);
    expect(res?.status()).toBe(200);
    expect(await page.locator('dt').first().textContent()).toBe('Organization');
    expect(await page.locator('#fact-team').textContent()).toBe('Acme Org');

    const form = page.locator('#login-form');
    await form.getByLabel('E-mail').fill(bob.email);
    await form.getByLabel('Password').fill(FACTORY_PASSWORD);
    await form.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('#signed-in-email').textContent()).toBe(bob.email);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.locator('#result').waitFor();
    expect(await page.locator('#result').textContent()).toContain(
      'You joined Acme Org as a member.',
    );

    const orgs = await t.get('/v2/orgs', { token: bob.token });
    expect(orgs.json.data).toEqual([expect.objectContaining({ id: org.id, role: 'member' })]);
    expect((await t.get('/v2/teams', { token: bob.token })).json.data).toEqual([]);
    expect(errors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
    await close();
  });
});
