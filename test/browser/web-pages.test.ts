// The pages around the console in a real browser: the API reference (/docs) under its CSP, the
// site's icon, and the verification page's way into the console. No console error and no
// failed request on any of them.
import { describe, expect, it } from 'vitest';
import { failedRequests, openPage } from './browser.ts';
import { consoleSuite, screenshots } from './console.ts';

const s = consoleSuite();

describe('pages beside the console', () => {
  it('shows the API reference without a CSP error or a failed request', async () => {
    const { page, errors, close } = await openPage(s.browser);
    const failed = failedRequests(page);
    await page.goto(`${s.t.base}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    await page.getByText('/v2/user/invitations', { exact: true }).first().waitFor();
    await screenshots(page, 'docs', false);
    expect(errors).toEqual([]);
    expect(failed).toEqual([]);
    await close();
  });

  it('serves one icon, linked by the pages and at /favicon.ico', async () => {
    const svg = await fetch(`${s.t.base}/favicon.svg`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    const body = await svg.text();
    expect(body).toMatch(/^<svg /);
    const ico = await fetch(`${s.t.base}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(await ico.text()).toBe(body);
    for (const path of ['/verify-email', '/console/sign-in'])
      expect(await (await fetch(`${s.t.base}${path}`)).text()).toMatch(
        /<link rel="icon" href="\/favicon.svg" type="image\/svg\+xml"/,
      );
  });
});
