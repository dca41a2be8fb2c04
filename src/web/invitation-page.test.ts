// The invitation page's markup for each status, without a browser (the browser test drives
// the pending page end to end).
import { describe, expect, it } from 'vitest';
import { escapeHtml } from './html.ts';
import { invitationPage, notFoundPage, type Preview } from './invitation-page.ts';

const assets = {
  stylesheet: '/invitations/assets/invitation.css?v=1',
  script: '/invitations/assets/invitation.js?v=1',
};
const preview = (over: Partial<Preview> = {}): Preview => ({
  kind: 'team',
  team: { name: 'Acme', slug: 'acme' },
  role: 'member',
  email: 'bob@example.test',
  status: 'pending',
  expires_at: '2030-03-07T10:00:00.000Z',
  inviter_name: 'Ann',
  ...over,
});

describe('invitation page', () => {
  it('escapes every value from the database or the URL', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    const html = invitationPage(
      preview({
        team: { name: '<script>alert(1)</script>', slug: 'x' },
        inviter_name: '"><img src=x>',
      }),
      'inv_"><b>',
      assets,
    );
    expect(html).not.toMatch(/<script>alert|<img|<b>/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('data-token="inv_&quot;&gt;&lt;b&gt;"');
  });

  it('offers sign-in, sign-up and the answers only while pending, with no inline script', () => {
    const html = invitationPage(preview(), 'inv_abc', assets);
    expect(html).toContain('<h1>Join Acme</h1>');
    expect(html).toContain('until 7 March 2030');
    expect(html).toMatch(/id="accept"/);
    expect(html).toMatch(/id="signup-password"[^>]*minlength="10"/);
    expect(html).toContain(`<script src="${assets.script}" defer></script>`);
    expect(html.match(/<script/g)).toHaveLength(1);
  });

  it.each([
    ['accepted', 'already been accepted'],
    ['expired', 'expired on 7 March 2030. Ask Ann to send you a new one'],
    ['revoked', 'taken back or declined'],
  ] as const)(
    'says plainly that a %s invitation is closed, without buttons or script',
    (status, words) => {
      const html = invitationPage(preview({ status }), 'inv_abc', assets);
      expect(html).toContain(words);
      expect(html).toContain('<h1>Invitation to Acme</h1>');
      expect(html).not.toMatch(/<button|<form|<script|data-token/);
    },
  );

  it('names an organization, and answers it on the org routes', () => {
    const html = invitationPage(preview({ kind: 'org', role: 'admin' }), 'inv_abc', assets);
    expect(html).toContain('<dt>Organization</dt>');
    expect(html).toContain('data-kind="org"');
    expect(html).toContain('manage the organization&#39;s members');
    expect(html).not.toMatch(/<dt>Team<\/dt>/);
    const team = invitationPage(preview(), 'inv_abc', assets);
    expect(team).toContain('<dt>Team</dt>');
    expect(team).toContain('data-kind="team"');
    const closed = invitationPage(
      preview({ kind: 'org', status: 'revoked', inviter_name: null }),
      'inv_abc',
      assets,
    );
    expect(closed).toContain('Ask an organization admin');
  });

  it('has a not-found page that reveals nothing', () => {
    const html = notFoundPage(assets);
    expect(html).toContain('does not exist or was taken back');
    expect(html).not.toMatch(/<script|<form/);
  });
});
