// The invitation page's behaviour (the markup comes from src/web/invitation-page.ts). The visitor
// signs in or signs up through the JSON API, then accepts or declines with the bearer token.
// The access token lives in sessionStorage only: it ends with the tab and no cookie carries it,
// so the API stays free of cross-site request forgery. Every text the API or the visitor
// supplies is set with textContent, never as HTML.

(() => {
  const root = document.getElementById('invitation-actions');
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const { token, kind, email: invitedEmail, team, role } = root.dataset;
  // A team's invitation is answered on the team routes, an organization's on the org routes.
  const base = `/v2/${kind === 'org' ? 'orgs' : 'teams'}/invitations/${encodeURIComponent(token)}`;
  const KEY = 'frameplane.session';
  const message = $('message');
  const article = (word) => (/^[aeiou]/i.test(word) ? 'an' : 'a');

  // --- session -------------------------------------------------------------------------------
  function loadSession() {
    try {
      const s = JSON.parse(sessionStorage.getItem(KEY) || 'null');
      return s && typeof s.access_token === 'string' ? s : null;
    } catch {
      return null;
    }
  }
  const saveSession = (s) =>
    sessionStorage.setItem(
      KEY,
      JSON.stringify({ access_token: s.access_token, email: s.user.email }),
    );
  const clearSession = () => sessionStorage.removeItem(KEY);

  // --- API -----------------------------------------------------------------------------------
  /** One call; errors come back as the problem+json body (RFC 9457), never thrown. */
  async function api(method, path, { body, session } = {}) {
    const headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (session) headers.authorization = `Bearer ${session.access_token}`;
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      return {
        ok: false,
        status: 0,
        problem: {
          detail: 'The service could not be reached. Check your connection and try again.',
        },
      };
    }
    let data = null;
    try {
      if (res.status !== 204) data = await res.json();
    } catch {
      /* not JSON */
    }
    if (res.ok) return { ok: true, status: res.status, data };
    const problem =
      data && typeof data === 'object' && data.detail
        ? data
        : { detail: `The request failed (HTTP ${res.status}). Try again.` };
    return { ok: false, status: res.status, problem };
  }

  // --- views ---------------------------------------------------------------------------------
  function say(text, kind = 'error') {
    message.textContent = text;
    message.className = `message message-${kind}`;
    message.hidden = !text;
  }

  function showOnly(id) {
    for (const part of ['signed-out', 'signed-in', 'confirm-decline']) $(part).hidden = part !== id;
  }

  function showSignedOut(formId = 'login-form') {
    showOnly('signed-out');
    for (const f of ['login-form', 'signup-form']) $(f).hidden = f !== formId;
  }

  function showSignedIn(email) {
    $('signed-in-email').textContent = email;
    showOnly('signed-in');
  }

  /** Keeps the facts table true after an answer; `status` is also the badge's colour. */
  function setStatus(status) {
    const badge = document.querySelector('#fact-status .status');
    if (!badge) return;
    badge.textContent = status.charAt(0).toUpperCase() + status.slice(1);
    badge.className = `status status-${status}`;
    document.querySelector('#fact-status .expiry')?.remove();
  }

  /** The end of the road: no more buttons, one message (and where to go next, if anywhere). */
  function finish(title, text, kind, next) {
    root.hidden = true;
    say('');
    const result = $('result');
    result.className = `result result-${kind}`;
    $('result-title').textContent = title;
    $('result-text').textContent = text;
    // The console adopts this tab's session (sessionStorage), so the link needs no new login.
    if (next) $('result-link').href = next;
    $('result-next').hidden = !next;
    result.hidden = false;
    $('result-title').focus();
  }

  /** Disables every button and field while a request runs, so nothing is sent twice. */
  async function busy(work) {
    const controls = root.querySelectorAll('button, input');
    root.setAttribute('aria-busy', 'true');
    controls.forEach((c) => {
      c.disabled = true;
    });
    try {
      return await work();
    } finally {
      controls.forEach((c) => {
        c.disabled = false;
      });
      root.removeAttribute('aria-busy');
    }
  }

  /** Answers that close the invitation for good: unknown or revoked, used, expired, already a member. */
  function closedBy(r) {
    if (![404, 409, 410].includes(r.status)) return false;
    const status =
      r.status === 410
        ? 'expired'
        : r.status === 404
          ? 'revoked'
          : r.problem.code === 'invitation_used'
            ? 'accepted'
            : null;
    if (status) setStatus(status);
    finish('This invitation cannot be used', r.problem.detail, 'error');
    return true;
  }

  function sessionEnded() {
    clearSession();
    showSignedOut();
    say('Your session has ended. Sign in again to continue.');
  }

  // --- actions -------------------------------------------------------------------------------
  async function signIn(path, body) {
    const r = await busy(() => api('POST', path, { body }));
    if (!r.ok) return r;
    saveSession(r.data);
    say('');
    showSignedIn(r.data.user.email);
    $('accept').focus();
    return r;
  }

  $('login-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const r = await signIn('/v2/auth/login', {
      email: $('login-email').value.trim(),
      password: $('login-password').value,
    });
    $('login-password').value = '';
    if (!r.ok) say(r.problem.detail);
  });

  $('signup-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { email: $('signup-email').value.trim(), password: $('signup-password').value };
    // The invitation's token proves the invited mailbox: the account is created with its
    // address verified, and takes the address from an account that never proved it.
    if (body.email.toLowerCase() === invitedEmail.toLowerCase()) body.invitation_token = token;
    const name = $('signup-name').value.trim();
    if (name) body.name = name;
    const r = await signIn('/v2/auth/signup', body);
    if (r.ok) {
      $('signup-password').value = '';
      return;
    }
    if (r.problem.code === 'email_taken') {
      $('login-email').value = body.email;
      showSignedOut('login-form');
      say(`${r.problem.detail} Sign in with it instead.`);
      $('login-password').focus();
      return;
    }
    say(r.problem.detail);
  });

  for (const b of document.querySelectorAll('[data-show]')) {
    b.addEventListener('click', () => {
      say('');
      showSignedOut(b.dataset.show);
      $(b.dataset.show).querySelector('input:not([value])')?.focus();
    });
  }

  $('accept').addEventListener('click', async () => {
    const session = loadSession();
    if (!session) return sessionEnded();
    const r = await busy(() => api('POST', `${base}/accept`, { session }));
    if (r.ok) {
      setStatus('accepted');
      // The console's page of what was joined (an org's answer names org_id, a team's team_id).
      finish(
        `Welcome to ${team}!`,
        `You joined ${team} as ${article(r.data.role)} ${r.data.role}.`,
        'success',
        `/console/${kind === 'org' ? 'orgs' : 'teams'}/${encodeURIComponent(r.data.org_id ?? r.data.team_id)}`,
      );
      return;
    }
    if (r.status === 401) return sessionEnded();
    if (closedBy(r)) return;
    if (r.problem.code === 'email_mismatch') {
      say(
        `${r.problem.detail} You are signed in as ${session.email}, but the invitation is for ${invitedEmail}.`,
      );
      return;
    }
    say(r.problem.detail);
  });

  let returnTo = 'signed-out';
  for (const b of document.querySelectorAll('[data-decline]')) {
    b.addEventListener('click', () => {
      returnTo = $('signed-in').hidden ? 'signed-out' : 'signed-in';
      say('');
      showOnly('confirm-decline');
      $('decline-no').focus();
    });
  }

  $('decline-no').addEventListener('click', () => {
    showOnly(returnTo);
  });

  $('decline-yes').addEventListener('click', async () => {
    // A signed-in visitor declines as themselves (the API checks the address); anyone else
    // declines with the token alone.
    const session = returnTo === 'signed-in' ? loadSession() : null;
    const r = await busy(() => api('POST', `${base}/decline`, { session }));
    if (r.ok) {
      setStatus('declined');
      finish(
        'Invitation declined',
        `You declined the invitation to join ${team} as ${article(role)} ${role}. You can close this page.`,
        'neutral',
      );
      return;
    }
    if (r.status === 401) return sessionEnded();
    if (closedBy(r)) return;
    showOnly(returnTo);
    say(r.problem.detail);
  });

  $('sign-out').addEventListener('click', async () => {
    const session = loadSession();
    clearSession();
    say('');
    showSignedOut();
    $('login-email').value = invitedEmail;
    $('login-password').focus();
    // Revoke the token on the server too; the page does not wait for it.
    if (session) api('POST', '/v2/auth/logout', { session });
  });

  // --- start ---------------------------------------------------------------------------------
  async function start() {
    const session = loadSession();
    if (session) {
      const me = await api('GET', '/v2/user', { session });
      if (me.ok) showSignedIn(me.data.email);
      else {
        clearSession();
        showSignedOut();
      }
    } else {
      showSignedOut();
    }
    root.hidden = false;
  }
  start();
})();
