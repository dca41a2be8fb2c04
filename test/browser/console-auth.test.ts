// The console, served by the service: built at start, opened at `/`, under the strict CSP.
// A person signs up, sees the layout, signs out, is refused a wrong password next to the field,
// and signs in again. (How the routes answer is test/web/console-routes.test.ts.)
import { describe, expect, it } from 'vitest';
import { person, screenshots, signUp, unique, consoleSuite } from './console.ts';

const s = consoleSuite();

describe('console: signing up, in and out', () => {
  it('opens at /, signs up, signs out, refuses a wrong password, signs in', async () => {
    const { page, realErrors, close } = await person(s.browser, s.t.base);
    const res = await page.goto('/');
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForURL(/\/console\/sign-in\?next=/);
    await screenshots(page, 'sign-in');

    const email = unique('ann');
    await signUp(page, email, 'Ann');
    expect(await page.locator('h1').textContent()).toBe('Welcome, Ann');
    // A new account has not proved its address yet: the console offers a new link.
    await page.getByRole('heading', { name: 'Confirm your e-mail address' }).waitFor();
    await page.getByRole('button', { name: 'Send a new link' }).click();
    await page.getByText(`A new link is on its way to ${email}.`).waitFor();
    await screenshots(page, 'home');

    await page.getByRole('link', { name: 'Account' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill('ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.locator('#new-token-value').textContent();
    expect(secret).toMatch(/^fp_/);
    const check = await s.t.get('/v2/user', { token: secret ?? '' });
    expect(check.json.email).toBe(email);
    await page.getByRole('button', { name: 'Revoke ci' }).click();
    await expect
      .poll(async () => (await s.t.get('/v2/user', { token: secret ?? '' })).status)
      .toBe(401);
    // Revoked, the token is no longer offered to be copied.
    await expect.poll(() => page.locator('#new-token-value').count()).toBe(0);
    await screenshots(page, 'account');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/console\/sign-in/);
    expect(await page.evaluate(() => localStorage.getItem('frameplane.token'))).toBeNull();

    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The refusal is shown by the password field, which is marked invalid.
    const password = page.getByLabel('Password');
    await expect.poll(() => password.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field-error').textContent()).toMatch(/password/i);

    // With the keyboard only: Tab to each field, Enter to send. The form must be on the page
    // before the first Tab: pressed while the reloaded page was still rendering, it went
    // elsewhere and the e-mail was typed into nothing (about one run in two on a busy machine).
    await page.reload();
    await page.getByLabel('E-mail').waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('a-long-enough-password');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#signed-in-as').textContent()).toBe(email);
    // "Skip to content" (the first link) leads past the navigation; a link followed with the
    // keyboard moves focus to the new page's content.
    const skip = page.getByRole('link', { name: 'Skip to content' });
    expect(await page.evaluate(() => document.querySelector('a')?.textContent)).toBe(
      'Skip to content',
    );
    await skip.focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('content');
    await page.getByRole('link', { name: 'Teams' }).first().focus();
    await page.keyboard.press('Enter');
    await page.waitForURL('**/console/teams');
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('content');
    expect(realErrors()).toEqual([]);
    await close();
  });
});
