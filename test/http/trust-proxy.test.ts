// Issue 12 item 11: behind a load balancer every request comes from the balancer; TRUST_PROXY
// says whose X-Forwarded-For to believe, so per-IP limits stay per client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { expectProblem } from '../helpers/factories.ts';
import { loadConfig, trustProxy } from '../../src/config.ts';

const PROXY = '10.0.0.5';
const limits = { RATE_FAILED_LOGINS_PER_IP: '1', RATE_FAILED_LOGINS_PER_ADDRESS: '50' };

async function wrongLogin(t: TestApp, remoteAddress: string, forwardedFor?: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: '/v2/auth/login',
    remoteAddress,
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
    payload: { email: 'nobody@example.test', password: 'wrong-password' },
  });
  return { status: res.statusCode, json: JSON.parse(res.body), headers: res.headers };
}

describe('TRUST_PROXY', () => {
  let trusting: TestApp;
  let plain: TestApp;
  beforeAll(async () => {
    [trusting, plain] = await Promise.all([
      testApp({ env: { ...limits, TRUST_PROXY: `${PROXY},10.1.0.0/16` } }),
      testApp({ env: limits }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([trusting?.close(), plain?.close()]);
  });

  it('set to the proxy: two clients behind it are counted separately', async () => {
    expect((await wrongLogin(trusting, PROXY, '198.51.100.1')).status).toBe(401);
    expect((await wrongLogin(trusting, PROXY, '198.51.100.2')).status).toBe(401);
    expectProblem(await wrongLogin(trusting, PROXY, '198.51.100.1'), 429, 'rate_limited');
    // A proxy inside a trusted CIDR is believed too.
    expect((await wrongLogin(trusting, '10.1.2.3', '198.51.100.3')).status).toBe(401);
  });

  it('set to the proxy: X-Forwarded-For from anyone else is not believed', async () => {
    expect((await wrongLogin(trusting, '192.0.2.50', '198.51.100.10')).status).toBe(401);
    expectProblem(await wrongLogin(trusting, '192.0.2.50', '198.51.100.11'), 429, 'rate_limited');
  });

  it('unset: everything behind the proxy counts as the proxy', async () => {
    expect((await wrongLogin(plain, PROXY, '198.51.100.1')).status).toBe(401);
    expectProblem(await wrongLogin(plain, PROXY, '198.51.100.2'), 429, 'rate_limited');
  });

  it('parses false, true, hop counts and address lists, and says what to send otherwise', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(trustProxy('false')).toBe(false);
    expect(trustProxy('0')).toBe(false);
    expect(trustProxy('true')).toBe(true);
    expect(trustProxy(' 10.0.0.5 , 10.1.0.0/16,::1,fd00::/8,loopback ')).toEqual([
      '10.0.0.5',
      '10.1.0.0/16',
      '::1',
      'fd00::/8',
      'loopback',
    ]);
    const twoHops = trustProxy('2') as (address: string, hop: number) => boolean;
    expect([0, 1, 2].map((hop) => twoHops('10.0.0.5', hop))).toEqual([true, true, false]);
    for (const bad of [
      'yes',
      '10.0.0.300',
      '10.0.0.0/33',
      '10.0.0.5,,10.0.0.6',
      'lb.internal',
      '-1',
      '1.5',
    ]) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(
        /^TRUST_PROXY must be "false", "true", a number of proxy hops/,
      );
    }
    expect(() => trustProxy('10.0.0.5,lb.internal')).toThrow(
      '"lb.internal" is not an address or CIDR',
    );
  });

  it('a hop count believes the last forwarder', async () => {
    const hops = await testApp({ env: { ...limits, TRUST_PROXY: '1' } });
    try {
      expect((await wrongLogin(hops, PROXY, '203.0.113.1, 198.51.100.1')).status).toBe(401);
      expect((await wrongLogin(hops, PROXY, '203.0.113.1, 198.51.100.2')).status).toBe(401);
      expectProblem(
        await wrongLogin(hops, PROXY, '203.0.113.2, 198.51.100.1'),
        429,
        'rate_limited',
      );
    } finally {
      await hops.close();
    }
  });
});
