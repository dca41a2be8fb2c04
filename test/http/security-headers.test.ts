// Issue 13, item 3: the security headers are helmet's, recorded once at start-up; every answer
// of the real application carries the whole list, and a route's own value still wins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { newUser } from '../helpers/factories.ts';
import { securityHeaders } from '../../src/http/security-headers.ts';

const CSP_OPTIONS = (https: boolean) => ({
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
});

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t.close();
});

describe('security headers (issue 13, item 3)', () => {
  it("records helmet's defaults, with upgrade-insecure-requests only behind https", () => {
    const plain = new Map(securityHeaders(CSP_OPTIONS(false)));
    expect([...plain.keys()].sort()).toEqual([
      'content-security-policy',
      'cross-origin-opener-policy',
      'cross-origin-resource-policy',
      'origin-agent-cluster',
      'referrer-policy',
      'strict-transport-security',
      'x-content-type-options',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-frame-options',
      'x-permitted-cross-domain-policies',
      'x-xss-protection',
    ]);
    expect(plain.get('content-security-policy')).toContain("frame-ancestors 'self'");
    expect(plain.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
    const secure = new Map(securityHeaders(CSP_OPTIONS(true)));
    expect(secure.get('content-security-policy')).toContain('upgrade-insecure-requests');
  });

  it('are on a read, a 401, a 404 and a 405 alike, with the request id', async () => {
    const expected = securityHeaders(CSP_OPTIONS(t.core.config.publicUrl.startsWith('https:')));
    const user = await newUser(t);
    const answers = await Promise.all([
      t.get('/v2/user', { token: user.token }),
      t.get('/v2/user'),
      t.get('/v2/no-such-route', { token: user.token }),
      t.put('/v2/user', { token: user.token }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 401, 404, 405]);
    for (const a of answers) {
      for (const [name, value] of expected) expect(a.headers[name], name).toBe(value);
      expect(a.headers['x-request-id']).toBeTruthy();
    }
  });

  it('leave a route its own value: the API reference keeps its CSP', async () => {
    const page = await t.get('/docs/');
    expect(page.status).toBe(200);
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');
  });
});
