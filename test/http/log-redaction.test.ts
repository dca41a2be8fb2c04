// Issue 12, item 5: invitation tokens (and other secrets in URLs) never reach the access log.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { invitationToken, newTeam, newUser } from '../helpers/factories.ts';
import { buildApp, type App } from '../../src/app.ts';
import { redactUrl } from '../../src/http/log-redaction.ts';

let t: TestApp;
let logged: App;
const lines: any[] = [];
beforeAll(async () => {
  t = await testApp();
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  // The real application on the same database, with a logger that writes to memory.
  logged = await buildApp(t.core, t.services, { logger: pino({ level: 'info' }, sink) });
});
afterAll(async () => {
  await logged?.close();
  await t.close();
});

async function logOf(method: 'GET' | 'POST', url: string, token?: string) {
  lines.length = 0;
  const res = await logged.inject({
    method,
    url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  return { res, text, access: lines.find((l) => l.msg === 'request') };
}

describe('Tokens in logged URLs (issue 12, item 5)', () => {
  it('redacts the invitation token of the page, accept and decline in the access log', async () => {
    const admin = await newUser(t, 'admin');
    const team = await newTeam(t, admin);
    const bob = await newUser(t, 'bob');
    expect(
      (
        await t.post(`/v2/teams/${team.id}/invitations`, {
          token: admin.token,
          body: { email: bob.email, role: 'member' },
        })
      ).status,
    ).toBe(201);
    const real = await invitationToken(t, bob.email);

    for (const [method, url] of [
      ['GET', `/invitations/${real}`],
      ['POST', `/v2/teams/invitations/${real}/decline`],
      ['POST', `/v2/teams/invitations/${encodeURIComponent(real)}/accept`],
      ['POST', '/v2/teams/invitations/some-token-we-made-up/accept'],
      ['GET', '/invitations/some-token-we-made-up?from=mail'],
    ] as const) {
      const { res, text, access } = await logOf(
        method,
        url,
        method === 'POST' ? bob.token : undefined,
      );
      expect(res.statusCode).toBeLessThan(500);
      expect(access, text).toBeDefined();
      expect(text).not.toContain(real);
      expect(text).not.toContain('some-token-we-made-up');
      expect(access.url).toContain('[redacted]');
    }
    const page = await logOf('GET', `/invitations/${real}`);
    expect(page.access.url).toBe('/invitations/[redacted]');
    const accept = await logOf('POST', `/v2/teams/invitations/${real}/accept`, bob.token);
    expect(accept.access.url).toBe('/v2/teams/invitations/[redacted]/accept');
  });

  it('redacts token-like query values and keeps the rest of a URL readable', async () => {
    const q = await logOf('GET', '/v2/user?token=abc123secret&limit=5&access_token=zzz999');
    expect(q.text).not.toContain('abc123secret');
    expect(q.text).not.toContain('zzz999');
    expect(q.access.url).toBe('/v2/user?token=[redacted]&limit=5&access_token=[redacted]');
    // Ids are not secrets: an invitation's id, the page's assets, other paths stay as they are.
    expect(redactUrl('/v2/teams/team_01J/invitations/inv_01J/resend')).toBe(
      '/v2/teams/team_01J/invitations/inv_01J/resend',
    );
    expect(redactUrl('/invitations/assets/invitation.js')).toBe(
      '/invitations/assets/invitation.js',
    );
    expect(redactUrl('/v2/projects/prj_01J/frames?limit=5&cursor=abc')).toBe(
      '/v2/projects/prj_01J/frames?limit=5&cursor=abc',
    );
    expect(redactUrl('//invitations/abc')).toBe('//invitations/[redacted]');
    expect(redactUrl('/V2/Teams/Invitations/abc/accept')).toBe(
      '/V2/Teams/Invitations/[redacted]/accept',
    );
    const shaped = `fpa_${'A'.repeat(43)}`;
    expect(redactUrl(`/somewhere/${shaped}`)).toBe('/somewhere/[redacted]');
  });
});
