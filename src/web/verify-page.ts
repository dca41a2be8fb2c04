// The page a verification e-mail links to (PUBLIC_URL/verify-email#token=…). The token rides
// in the fragment, which the browser never sends, so the page itself is the same for everyone
// and holds nothing secret; assets/verify-email.js reads the token and POSTs it, with the
// password chosen for the account, to POST /v2/auth/verify-email.
import { page } from './html.ts';
import type { Assets } from './invitation-page.ts';

export function verifyPage(assets: Assets): string {
  const body = `<h1>Confirm your e-mail address</h1>
<p class="lead">Enter the password you chose for the account.
Proving both the mailbox and the password confirms the address.</p>
<noscript><p class="notice">This page needs JavaScript to confirm the address.</p></noscript>
<div id="message" class="message" role="alert" hidden></div>
<form id="verify-form" class="stack" method="post" hidden>
  <label for="verify-password">Password</label>
  <input id="verify-password" name="password" type="password" autocomplete="current-password"
    required maxlength="1024">
  <button type="submit" class="primary">Confirm address</button>
</form>
<div id="result" class="result" hidden>
  <h2 id="result-title" tabindex="-1"></h2><p id="result-text"></p>
  <p><a id="result-link" href="/console">Open the console</a></p>
</div>`;
  const title = 'Confirm your e-mail address · Frameplane';
  return page({ title, body, stylesheet: assets.stylesheet, script: assets.script });
}
