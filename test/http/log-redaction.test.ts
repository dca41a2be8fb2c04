// Issue 12, item 5: invitation tokens (and other secrets in URLs) never reach the access log.
// Issue 34, item 10: nor do an organization's, nor those of any route added later.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.ts';
import { invitationToken, newTeam, newUser, type TestUser } from '../helpers/factories.ts';
import { newOrg } from '../helpers/orgs.ts';
import { buildApp, type App } from '../../src/app.ts';
import { learnRoute, redactUrl } from '../../src/http/log-redaction.ts';

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

/** A pending invitation of `kind` for a new user: its real token and the invitee. */
async function invited(kind: 'teams' | 'orgs'): Promise<{ token: string; invitee: TestUser }> {
  const admin = await newUser(t, 'admin');
  const invitee = await newUser(t, 'invitee');
  const id = kind === 'teams' ? (await newTeam(t, admin)).id : (await newOrg(t, admin)).id;
  const r = await t.post(`/v2/${kind}/${id}/invitations`, {
    token: admin.token,
    body: { email: invitee.email, role: 'member' },
  });
  expect(r.status, r.text).toBe(201);
  return { token: await invitationToken(t, invitee.email), invitee };
}

describe('Every URL that carries an invitation or verification token (issue 34, item 10)', () => {
  const TOKEN = '{token}';
  it.each([
    ['GET', 'teams', `/invitations/${TOKEN}`, '/invitations/[redacted]'],
    ['GET', 'orgs', `/invitations/${TOKEN}`, '/invitations/[redacted]'],
    [
      'POST',
      'teams',
      `/v2/teams/invitations/${TOKEN}/accept`,
      '/v2/teams/invitations/[redacted]/accept',
    ],
    [
      'POST',
      'teams',
      `/v2/teams/invitations/${TOKEN}/decline`,
      '/v2/teams/invitations/[redacted]/decline',
    ],
    [
      'POST',
      'orgs',
      `/v2/orgs/invitations/${TOKEN}/accept`,
      '/v2/orgs/invitations/[redacted]/accept',
    ],
    [
      'POST',
      'orgs',
      `/v2/orgs/invitations/${TOKEN}/decline`,
      '/v2/orgs/invitations/[redacted]/decline',
    ],
  ] as const)('%s %s: %s is logged as %s', async (method, kind, path, expected) => {
    const { token, invitee } = await invited(kind);
    const url = path.replace(TOKEN, encodeURIComponent(token));
    // A link cut short in a mail client: not shaped like a whole secret, still most of one.
    const cut = token.slice(0, 30);
    const short = await logOf(method, path.replace(TOKEN, cut), invitee.token);
    expect(short.res.statusCode).toBeLessThan(500);
    expect(short.text).not.toContain(cut);
    expect(short.access.url).toBe(expected);

    const { res, text, access } = await logOf(method, url, invitee.token);
    expect(res.statusCode, res.body).toBeLessThan(300);
    expect(text).not.toContain(token);
    expect(access.url).toBe(expected);
    // A mistyped suffix or a 404 under the same route still hides the token.
    const stray = await logOf(method, `${path.replace(TOKEN, cut)}/extra?x=1`, invitee.token);
    expect(stray.text).not.toContain(cut);
  });

  // The verification link keeps its token in the fragment, which is never sent; a query is cut.
  it('cuts a verification token sent in a query', async () => {
    const { res, text, access } = await logOf('GET', '/verify-email?token=verif-secret-123');
    expect(res.statusCode).toBe(200);
    expect(text).not.toContain('verif-secret-123');
    expect(access.url).toBe('/verify-email?token=[redacted]');
  });

  it('covers every documented route whose path parameter is named like a secret', async () => {
    const doc = (await t.get('/v2/openapi.json')).json;
    const secretPaths = Object.keys(doc.paths).filter((p) => /\{token\}/.test(p));
    // The four answers to an invitation, at least; the page itself is not in the document.
    expect(secretPaths.length).toBeGreaterThanOrEqual(4);
    for (const p of secretPaths) {
      const url = p.replace('{token}', 'tok-value-xyz').replace(/\{[^}]+\}/g, 'id_1');
      expect(redactUrl(url), p).toBe(url.replace('tok-value-xyz', '[redacted]'));
    }
  });

  it('a route added with a secret parameter is redacted without another list to keep', () => {
    expect(redactUrl('/v2/example/abc/confirm/zz')).toBe('/v2/example/abc/confirm/zz');
    learnRoute('/v2/example/:example_id/confirm/:code');
    expect(redactUrl('/v2/example/abc/confirm/zz')).toBe('/v2/example/abc/confirm/[redacted]');
    expect(redactUrl('/v2/user/tokens/tok_01J')).toBe('/v2/user/tokens/tok_01J');
  });
});
