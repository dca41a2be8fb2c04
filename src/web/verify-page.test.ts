// The verification page's markup: the same for every link (the token stays in the fragment),
// with its script as a file, as the CSP requires.
import { describe, expect, it } from 'vitest';
import { verifyPage } from './verify-page.ts';

describe('verification page', () => {
  it('asks for the password, carries no token, and loads its script from a file', () => {
    const assets = {
      stylesheet: '/invitations/assets/invitation.css?v=1',
      script: '/invitations/assets/verify-email.js?v=1',
    };
    const html = verifyPage(assets);
    expect(html).toContain('<h1>Confirm your e-mail address</h1>');
    expect(html).toMatch(/id="verify-password"[^>]*type="password"/);
    expect(html).toContain(`<script src="${assets.script}" defer></script>`);
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toMatch(/vfy_|data-token/);
  });
});
