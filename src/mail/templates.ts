// E-mail bodies: a plain-text part and an HTML part for every message.
const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

export interface InvitationMail {
  /** What the invitation is to: a team, or an organization (CONTRACT 3a). */
  kind: 'team' | 'org';
  teamName: string;
  role: string;
  inviterName: string;
  link: string;
  expiresAt: Date;
  to: string;
}

export function invitationEmail(m: InvitationMail) {
  const expires = m.expiresAt.toUTCString();
  const noun = m.kind === 'org' ? 'organization' : 'team';
  const subject = `${m.inviterName} invited you to join ${m.teamName} on Frameplane`;
  const text = [
    `Hello,`,
    ``,
    `${m.inviterName} invited ${m.to} to join the ${noun} "${m.teamName}" on Frameplane as ${m.role}.`,
    ``,
    `Open this link to accept or decline:`,
    m.link,
    ``,
    `The invitation expires on ${expires}. If you did not expect it, you can ignore this e-mail.`,
  ].join('\n');
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1b1f24">
<p>Hello,</p>
<p><strong>${escapeHtml(m.inviterName)}</strong> invited ${escapeHtml(m.to)} to join the ${noun}
<strong>${escapeHtml(m.teamName)}</strong> on Frameplane as <strong>${escapeHtml(m.role)}</strong>.</p>
<p><a href="${escapeHtml(m.link)}" style="display:inline-block;padding:10px 16px;background:#2458d3;color:#fff;border-radius:6px;text-decoration:none">Review the invitation</a></p>
<p style="font-size:13px;color:#57606a">Or paste this link into your browser: ${escapeHtml(m.link)}<br>
The invitation expires on ${escapeHtml(expires)}. If you did not expect it, you can ignore this e-mail.</p>
</body></html>`;
  return { subject, text, html };
}

/**
 * The link that proves a mailbox (docs/api.md, "Proof of e-mail ownership"). `signup` is a
 * sign-up waiting for proof; `takesOver` says that an unverified account holds the address now.
 */
export interface VerificationMail {
  to: string;
  link: string;
  expiresAt: Date;
  signup: boolean;
  takesOver: boolean;
}

export function verificationEmail(m: VerificationMail) {
  const expires = m.expiresAt.toUTCString();
  const subject = m.signup
    ? 'Confirm your new Frameplane account'
    : 'Confirm your e-mail address on Frameplane';
  const what = m.signup
    ? `Someone asked to create a Frameplane account for ${m.to}.`
    : `Someone asked to confirm that ${m.to} belongs to their Frameplane account.`;
  const takeover = m.takesOver
    ? 'Another account uses this address without having proved it; confirming gives the address ' +
      'to the new account, and the other one loses it.'
    : '';
  const steps = 'Open the link and enter the password chosen for the account to confirm.';
  const ignore =
    'If that was not you, ignore this e-mail: nothing happens without the password. ' +
    `The link expires on ${expires}.`;
  const lines = [
    'Hello,',
    '',
    what,
    ...(takeover ? ['', takeover] : []),
    '',
    steps,
    m.link,
    '',
    ignore,
  ];
  const text = lines.join('\n');
  const button =
    'display:inline-block;padding:10px 16px;background:#2458d3;color:#fff;' +
    'border-radius:6px;text-decoration:none';
  const html = `<!doctype html><html><body style="font-family:system-ui,sans-serif;line-height:1.5;color:#1b1f24">
<p>Hello,</p>
<p>${escapeHtml(what)}</p>
${takeover ? `<p>${escapeHtml(takeover)}</p>\n` : ''}<p>${escapeHtml(steps)}</p>
<p><a href="${escapeHtml(m.link)}" style="${button}">Confirm the address</a></p>
<p style="font-size:13px;color:#57606a">Or paste this link into your browser: ${escapeHtml(m.link)}<br>
${escapeHtml(ignore)}</p>
</body></html>`;
  return { subject, text, html };
}
