// Helpers for the console's browser tests: a person signing up or in through the console's
// own forms, and screenshots at desktop and phone widths (written under test-results/, which
// git ignores, for people to look at; nothing compares them).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, listeningApp } from './browser.ts';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TestAppOptions } from '../helpers/app.ts';
import { FACTORY_PASSWORD } from '../helpers/factories.ts';

export const SHOTS = join(process.cwd(), 'test-results', 'console');
const SIZES = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
};

/** A browser context of its own (its own localStorage): one person. */
export async function person(browser: Browser, base: string) {
  const context = await browser.newContext({ viewport: SIZES.desktop, baseURL: base });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  // A refusal the test provokes is logged by Chromium as a failed load; not a page error.
  const realErrors = () => errors.filter((e) => !/Failed to load resource/.test(e));
  return { context, page, realErrors, close: () => context.close() };
}

export async function signUp(page: Page, email: string, name: string) {
  await page.goto('/console/sign-up');
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill('a-long-enough-password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect.poll(() => page.locator('#signed-in-as').textContent()).toBe(email);
}

/** The page at both widths, as `<name>-desktop.png` and `<name>-phone.png`. */
export async function screenshots(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  for (const [size, viewport] of Object.entries(SIZES)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: join(SHOTS, `${name}-${size}.png`), fullPage: true });
  }
  await page.setViewportSize(SIZES.desktop);
}

export const unique = (who: string) =>
  `${who}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}@example.test`;

/** The console's token in this page's storage, to check through the API what the page did. */
export const tokenOf = (page: Page) =>
  page.evaluate(() => localStorage.getItem('frameplane.token'));

/** Signs in through the console's form with the factories' password. */
export async function signIn(page: Page, email: string) {
  await page.goto('/console/sign-in');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(FACTORY_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.locator('#signed-in-as').textContent()).toBe(email);
}

/** The app on a real port and Chromium, for one test file; both closed after it. */
export function consoleSuite(options: () => Promise<TestAppOptions> | TestAppOptions = () => ({})) {
  const suite = {} as { t: Awaited<ReturnType<typeof listeningApp>>; browser: Browser };
  beforeAll(async () => {
    suite.t = await listeningApp(await options());
    suite.browser = await launchBrowser();
  });
  afterAll(async () => {
    await suite.browser?.close();
    await suite.t?.close();
  });
  return suite;
}
