// Helpers for the console's browser tests: a person signing up or in through the console's
// own forms, and screenshots at desktop and phone widths (written under test-results/, which
// git ignores, for people to look at; nothing compares them).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { launchBrowser, listeningApp } from './browser.ts';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TestApp, TestAppOptions } from '../helpers/app.ts';
import { FACTORY_PASSWORD } from '../helpers/factories.ts';
import { startSmtp, type SmtpCatcher } from '../helpers/smtp.ts';

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

/** The page at both widths, as `<name>-desktop.png` and `<name>-phone.png`; only its first
 *  screen when `fullPage` is false (a page as long as the API reference). */
export async function screenshots(page: Page, name: string, fullPage = true) {
  mkdirSync(SHOTS, { recursive: true });
  for (const [size, viewport] of Object.entries(SIZES)) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: join(SHOTS, `${name}-${size}.png`), fullPage });
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

/** Opens the project list from the menu, and waits until it is the page shown: the home page
 *  (a dashboard) names projects too, and a link looked for before it is gone may be its. */
export async function openProjects(page: Page) {
  await page.getByRole('link', { name: 'Projects' }).first().click();
  await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
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

/**
 * consoleSuite with the service's e-mails sent to a real SMTP server that catches them (and the
 * worker that sends them), and the path of the invitation link in the last one to an address.
 */
export function mailingConsoleSuite() {
  const mail = {} as { smtp: SmtpCatcher };
  const suite = consoleSuite(async () => {
    mail.smtp = await startSmtp();
    return { env: { SMTP_URL: mail.smtp.url }, worker: true };
  });
  afterAll(() => mail.smtp?.close());
  /** The link's path (its host is PUBLIC_URL's). */
  async function invitationLink(email: string) {
    await mail.smtp.waitFor(() => mail.smtp.to(email).length > 0);
    const text = mail.smtp.to(email).at(-1)?.text ?? '';
    const path = /\/invitations\/[A-Za-z0-9_\-.~%]+/.exec(text)?.[0];
    expect(path, text).toBeDefined();
    return path ?? '';
  }
  return Object.assign(suite, { mail, invitationLink });
}

/** The table rows that contain `text`. */
export const row = (page: Page, text: string) => page.getByRole('row').filter({ hasText: text });

/** How many pixels the page, or a table in it (a wide one scrolls on its own at phone width),
 *  is wider than its box: 0 when nothing has to be scrolled sideways. */
export const overflow = (page: Page) =>
  page.evaluate(() =>
    Math.max(
      ...[document.documentElement, ...document.querySelectorAll('table')].map(
        (e) => e.scrollWidth - e.clientWidth,
      ),
    ),
  );

/** Sets the phone's width (screenshots() goes back to the desktop's). */
export const asPhone = (page: Page) => page.setViewportSize(SIZES.phone);

/** Someone new follows an invitation link: signs up on the invitation page, accepts, and opens
 *  the console from there. */
export async function joinByLink(page: Page, link: string) {
  await page.goto(link);
  await page.getByRole('button', { name: 'Create an account' }).click();
  const form = page.locator('#signup-form');
  await form.getByLabel('Password').fill('a-long-enough-password');
  await form.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('button', { name: 'Accept invitation' }).click();
  await page.getByRole('link', { name: 'Open the console' }).click();
}

/** Ann, signed up in the console, and Bob, not signed up: each in a browser of their own. */
export async function annAndBob(
  suite: { browser: Browser; t: { base: string } },
  annEmail: string,
) {
  const ann = await person(suite.browser, suite.t.base);
  const bob = await person(suite.browser, suite.t.base);
  await signUp(ann.page, annEmail, 'Ann');
  return { ann, bob, bobEmail: unique('bob') };
}

/** On the teams' or the orgs' page: creates one (`button` says which), and opens its page. */
export async function createGroup(page: Page, name: string, slug: string, button: string) {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Slug').fill(slug);
  await page.getByRole('button', { name: button }).click();
  await page.getByRole('heading', { name }).waitFor();
}

/** On a team's or an org's page: invites `email` (at `role`, else the form's default). */
export async function invite(page: Page, email: string, role?: string) {
  await page.getByLabel('E-mail to invite').fill(email);
  if (role) await page.getByLabel('Role', { exact: true }).selectOption(role);
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await row(page, email).getByText('pending').waitFor();
}

/** On a team's or an org's page: gives a member another role. */
export async function changeRole(page: Page, email: string, role: string) {
  const member = row(page, email).first();
  await member.getByLabel(`Role of ${email}`).selectOption(role);
  await member.getByRole('button', { name: 'Change' }).click();
}

/** A member's role as the API has it; `group` is the team's or the org's path. */
export async function roleOf(t: TestApp, group: string, token: string, email: string) {
  const r = await t.get(`${group}/members`, { token });
  return r.json.data.find((m: { email: string }) => m.email === email)?.role;
}

/** No page had an error of its own (a CSP refusal, a script's); their browsers are closed. */
export async function closeClean(...people: Array<Awaited<ReturnType<typeof person>>>) {
  for (const p of people) {
    expect(p.realErrors()).toEqual([]);
    await p.close();
  }
}

/** Presses a button that asks first (ConfirmButton), and answers yes. */
export async function confirmed(scope: Page | Locator, label: string) {
  await scope.getByRole('button', { name: label }).click();
  await scope.getByRole('button', { name: `Yes, ${label.toLowerCase()}` }).click();
}
