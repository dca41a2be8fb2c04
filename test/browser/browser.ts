// Debian's Chromium driven by playwright-core, and the real app listening on a free port, for
// the browser tests. Each test gets its own browser context, so sessionStorage never leaks.
import { chromium, type Browser, type Page } from 'playwright-core';
import type { AddressInfo } from 'node:net';
import { testApp, type TestApp, type TestAppOptions } from '../helpers/app.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The app on 127.0.0.1:<free port>; `base` is its origin. */
export async function listeningApp(opts: TestAppOptions = {}): Promise<TestApp & { base: string }> {
  const t = await testApp(opts);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return Object.assign(t, { base: `http://127.0.0.1:${port}` });
}

/**
 * A fresh page whose console errors and uncaught exceptions are collected: a CSP violation
 * (an inline script, a blocked asset) shows up there, so tests can require none.
 */
export async function openPage(
  browser: Browser,
): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors, close: () => context.close() };
}

/**
 * Every request of the page that failed (no answer) or was answered 400 or more, as
 * "<status> <url>": a missing asset (a favicon) fails no test on its own otherwise.
 */
export function failedRequests(page: Page): string[] {
  const failed: string[] = [];
  page.on('requestfailed', (r) => {
    // Leaving a page aborts its open streams (SSE); that is not a failure of the page.
    if (r.failure()?.errorText !== 'net::ERR_ABORTED') failed.push(`failed ${r.url()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  return failed;
}
