// The verification page's behaviour (markup: src/web/verify-page.ts). The token is in the URL's
// fragment (#token=…), which no request carries; it is read once, then removed from the address
// bar and the history. The session that a confirmation answers is kept in sessionStorage, as on
// the invitation page. Texts from the API are set with textContent, never as HTML.

(() => {
  const $ = (id) => document.getElementById(id);
  const form = $('verify-form');
  const message = $('message');
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (location.hash) history.replaceState(null, '', location.pathname);

  function say(text) {
    message.textContent = text;
    message.className = 'message message-error';
    message.hidden = !text;
  }

  function finish(title, text, kind) {
    form.hidden = true;
    say('');
    const result = $('result');
    result.className = `result result-${kind}`;
    $('result-title').textContent = title;
    $('result-text').textContent = text;
    result.hidden = false;
    $('result-title').focus();
  }

  if (!token) {
    finish(
      'This link is incomplete',
      'Open the whole link from the e-mail, or copy all of it into the address bar.',
      'error',
    );
    return;
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const controls = form.querySelectorAll('button, input');
    controls.forEach((c) => {
      c.disabled = true;
    });
    let res = null;
    let data = null;
    try {
      res = await fetch('/v2/auth/verify-email', {
        method: 'POST',
        credentials: 'omit',
        cache: 'no-store',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ token, password: $('verify-password').value }),
      });
      data = await res.json();
    } catch {
      /* unreachable or not JSON: handled below */
    }
    controls.forEach((c) => {
      c.disabled = false;
    });
    $('verify-password').value = '';
    if (res?.ok && data) {
      const session = { access_token: data.access_token, email: data.user.email };
      sessionStorage.setItem('frameplane.session', JSON.stringify(session));
      finish(
        'Address confirmed',
        `${data.user.email} is confirmed, and you are signed in: the console opens with it.`,
        'success',
      );
      return;
    }
    const detail = data?.detail
      ? data.detail
      : 'The service could not be reached. Check your connection and try again.';
    if (res && [404, 409, 410].includes(res.status)) {
      finish('This link cannot be used', detail, 'error');
      return;
    }
    say(detail);
    $('verify-password').focus();
  });
  form.hidden = false;
  $('verify-password').focus();
})();
