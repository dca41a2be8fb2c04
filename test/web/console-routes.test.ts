// The console as the service serves it, without a browser (so `npm test` covers the build):
// index.html at `/` and under /console/, hashed assets cached for a year, and every other path
// untouched, so an unknown /v2 path is still the API's 404 problem. The first run after a change
// of console/ builds it (a few seconds); later runs find the build cached.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.close());

describe('console routes', () => {
  it('serves index.html at / and at client routes, under the strict CSP', async () => {
    for (const path of ['/', '/console', '/console/teams/anything']) {
      const r = await t.get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.headers['content-security-policy']).toContain("script-src 'self'");
      expect(r.text).toContain('<div id="root"></div>');
      // Scripts only from files of its own: no inline script, nothing from elsewhere.
      expect(r.text).not.toMatch(/<script(?![^>]*\ssrc="\/console\/assets\/)[^>]*>/);
    }
  }, 60_000);

  it('serves hashed assets with a long cache, and 404s for unknown ones', async () => {
    const html = (await t.get('/')).text;
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(assets.some((a) => a?.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a?.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const r = await t.get(asset ?? '');
      expect(r.status, asset).toBe(200);
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const missing = await t.get('/console/assets/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toContain('application/problem+json');
  });

  it('leaves the API its own 404s', async () => {
    const r = await t.get('/v2/no-such-route');
    expect(r.status).toBe(404);
    expect(r.json.code).toBe('route_not_found');
    expect((await t.get('/consoles')).status).toBe(404);
  });
});
