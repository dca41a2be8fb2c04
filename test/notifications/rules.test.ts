// The notifications' rules, as tables: which addresses and URLs are refused, the retry
// schedule, when an endpoint is turned off, what a frame event is among the events, the
// signature and the Slack sentence.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressRefusal, urlRefusal } from '../../src/notifications/address-policy.ts';
import {
  type EventBody,
  NOTIFICATION_EVENTS,
  notificationOf,
  renderBody,
  sentence,
} from '../../src/notifications/events.ts';
import {
  MAX_ATTEMPTS,
  nextAttemptAt,
  RETRY_DELAYS_SECONDS,
  shouldDisable,
} from '../../src/notifications/retry.ts';
import { signatureOf, verifySignature } from '../../src/notifications/signature.ts';
import { verify } from './receiver.ts';

describe('addresses', () => {
  // [address, refused by default, refused when private receivers are allowed]
  const table: Array<[string, boolean, boolean]> = [
    ['93.184.216.34', false, false],
    ['2606:2800:220:1:248:1893:25c8:1946', false, false],
    ['127.0.0.1', true, false],
    ['127.8.9.10', true, false],
    ['::1', true, false],
    ['10.0.0.1', true, false],
    ['172.16.0.1', true, false],
    ['172.31.255.255', true, false],
    ['172.32.0.1', false, false],
    ['192.168.1.1', true, false],
    ['169.254.169.254', true, false],
    ['100.64.0.1', true, false],
    ['100.128.0.1', false, false],
    ['fc00::1', true, false],
    ['fd12:3456::1', true, false],
    ['fe80::1', true, false],
    ['::ffff:127.0.0.1', true, false],
    ['::ffff:10.1.1.1', true, false],
    ['::ffff:8.8.8.8', false, false],
    ['0.0.0.0', true, true],
    ['::', true, true],
    ['255.255.255.255', true, true],
    ['224.0.0.1', true, true],
    ['ff02::1', true, true],
    ['240.0.0.1', true, true],
    ['192.0.2.1', true, true],
    ['2002:a00:1::', true, true],
    ['64:ff9b::a00:1', true, true],
    ['not-an-address', true, true],
  ];
  it.each(table)('%s: refused %s, with private allowed %s', (address, strict, allowing) => {
    expect(addressRefusal(address, false) !== undefined).toBe(strict);
    expect(addressRefusal(address, true) !== undefined).toBe(allowing);
  });
});

describe('URLs as saved', () => {
  const strict = { allowPrivate: false, allowHttp: false };
  const open = { allowPrivate: true, allowHttp: true };
  // [url, refused with strict rules, refused with open rules]
  const table: Array<[string, boolean, boolean]> = [
    ['https://hooks.example.com/x?token=1', false, false],
    ['https://hooks.slack.com/services/T0/B0/xyz', false, false],
    ['http://hooks.example.com/x', true, false],
    ['https://127.0.0.1/x', true, false],
    ['https://0x7f.0.0.1/x', true, false],
    ['https://017700000001/x', true, false],
    ['https://[::1]:8443/x', true, false],
    ['https://localhost/x', true, false],
    ['https://LOCALHOST./x', true, false],
    ['https://a.b.localhost/x', true, false],
    ['https://10.0.0.1/x', true, false],
    ['https://0.0.0.0/x', true, true],
    ['https://[::]/x', true, true],
    ['https://user@hooks.example.com/x', true, true],
    ['https://:pw@hooks.example.com/x', true, true],
    ['ftp://hooks.example.com/x', true, true],
    ['file:///etc/passwd', true, true],
    ['javascript:alert(1)', true, true],
    ['hooks.example.com/x', true, true],
  ];
  it.each(table)('%s: refused %s, with everything allowed %s', (url, strictly, openly) => {
    expect(urlRefusal(url, strict) !== undefined).toBe(strictly);
    expect(urlRefusal(url, open) !== undefined).toBe(openly);
  });
});

describe('the retry schedule', () => {
  const at = new Date('2030-01-01T00:00:00Z');
  it.each([
    [1, 60],
    [2, 300],
    [3, 1800],
    [4, 7200],
    [5, 21600],
    [6, 54000],
    [7, undefined],
    [8, undefined],
  ])('after failed try %i, the next comes %s s later', (attempt, seconds) => {
    const next = nextAttemptAt(attempt, at, false);
    expect(next && (next.getTime() - at.getTime()) / 1000).toBe(seconds);
  });
  it('covers about a day in seven tries; a manual delivery is tried once', () => {
    expect(MAX_ATTEMPTS).toBe(7);
    const total = RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0);
    expect(total / 3600).toBeGreaterThan(23);
    expect(total / 3600).toBeLessThan(24);
    expect(nextAttemptAt(1, at, true)).toBeUndefined();
  });
});

describe('turning a failing endpoint off', () => {
  const now = new Date('2030-01-02T00:00:00Z');
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3600_000);
  it.each([
    [14, 48, false],
    [15, 23.9, false],
    [15, 24, true],
    [100, 1, false],
    [22, 30, true],
  ])('%i failures since %s h ago: off %s', (failures, hours, off) => {
    expect(shouldDisable(failures, hoursAgo(hours), now)).toBe(off);
  });
});

describe('frame events among the notifications', () => {
  it.each([
    [{ type: 'status', status: 'Online' }, 'frame.online'],
    [{ type: 'status', status: 'Error' }, 'frame.error'],
    [{ type: 'status', status: 'Suspended' }, 'frame.suspended'],
    [{ type: 'status', status: 'Starting' }, undefined],
    [{ type: 'status', status: 'Degraded' }, undefined],
    [{ type: 'status', status: 'Stopped' }, undefined],
    [{ type: 'backoff_tripped' }, 'frame.backoff_tripped'],
    [{ type: 'domain_verified' }, 'domain.verified'],
    [{ type: 'domain_added' }, undefined],
    [{ type: 'deploy' }, undefined],
    [{ type: 'replica' }, undefined],
  ])('%o is %s', (e, expected) => {
    expect(notificationOf(e)).toBe(expected);
  });
});

describe('the signature', () => {
  it('verifies what was signed, and nothing else', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ minLength: 1 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (body, secret, t) => {
          const header = signatureOf([secret], t, body);
          expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
          expect(verifySignature(secret, header, body, t)).toBe(true);
          expect(verify(secret, header, body, t)).toBe(true);
          expect(verifySignature(secret, header, `${body} `, t)).toBe(false);
          expect(verifySignature(`${secret}x`, header, body, t)).toBe(false);
          expect(verifySignature(secret, header, body, t + 301)).toBe(false);
        },
      ),
    );
  });
  it('matches a known vector', () => {
    // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test
    expect(signatureOf(['whsec_test'], 1700000000, '{"a":1}')).toBe(
      't=1700000000,v1=38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789',
    );
  });
  it('carries a v1 per secret while a rotated one still signs: either verifies', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (body, next, old, t) => {
          fc.pre(next !== old);
          const header = signatureOf([next, old], t, body);
          expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
          expect(verifySignature(next, header, body, t)).toBe(true);
          expect(verifySignature(old, header, body, t)).toBe(true);
          expect(verify(old, header, body, t)).toBe(true);
          expect(verifySignature(`${old}x`, header, body, t)).toBe(false);
        },
      ),
    );
  });
});

describe('sentences for a chat channel', () => {
  const frame = { id: 'frm_1', name: 'web' };
  const base = { id: 'nev_1', created_at: '2030-01-01T00:00:00.000Z' };
  const project = { id: 'prj_1', name: 'Shop' };
  const cases: Array<[EventBody['type'], Record<string, unknown>, string]> = [
    [
      'deploy.started',
      { frame, deployment: { trigger: 'push', commit_sha: 'abcdef0123' } },
      'Deploy of web (Shop) started (push, commit abcdef0).',
    ],
    ['deploy.succeeded', { frame, deployment: {} }, 'Deploy of web (Shop) succeeded.'],
    [
      'deploy.failed',
      { frame, deployment: { failure_reason: 'build_failed', failure_message: 'npm ERR!' } },
      'Deploy of web (Shop) failed: build_failed (npm ERR!).',
    ],
    ['frame.online', { frame }, 'web (Shop) is Online.'],
    ['frame.error', { frame, reason: 'oom' }, 'web (Shop) is in Error: oom.'],
    ['frame.suspended', { frame }, 'web (Shop) is Suspended: the bill is past due.'],
    [
      'domain.verified',
      { frame, domain: { hostname: 'shop.example.com' } },
      'shop.example.com is verified and routes to web (Shop).',
    ],
    [
      'member.added',
      { user: { name: 'Ann', email: 'ann@example.com' }, via: { kind: 'team', name: 'Ops' } },
      'Ann <ann@example.com> joined team Ops, which reaches Shop.',
    ],
  ];
  it.each(cases)('%s', (type, data, text) => {
    expect(sentence({ ...base, type, project, data })).toBe(text);
  });
  it('has one for every event, and escapes Slack markup', () => {
    for (const type of NOTIFICATION_EVENTS)
      expect(sentence({ ...base, type, project, data: { frame } })).not.toBe('');
    const body = renderBody(
      { ...base, type: 'frame.online', project: { id: 'p', name: '<!channel> & co' }, data: {} },
      'slack',
    );
    expect(JSON.parse(body)).toEqual({ text: '? (&lt;!channel&gt; &amp; co) is Online.' });
  });
});
