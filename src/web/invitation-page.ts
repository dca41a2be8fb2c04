// The invitation page (CONTRACT 4): what the e-mail link opens. The server renders the facts
// (team or organization, role, address, status); assets/invitation.js signs the visitor in and
// calls the API to accept or decline. Pure functions of the preview, so they are tested without
// a browser.
import type { InvitationsService } from '../teams/invitations-service.ts';
import { escapeHtml as e, page } from './html.ts';

export type Preview = NonNullable<Awaited<ReturnType<InvitationsService['preview']>>>;
export interface Assets {
  stylesheet: string;
  script: string;
}

const ROLE_HINTS: Record<Preview['kind'], Record<string, string>> = {
  team: {
    viewer: 'Viewers can see the team and the projects shared with it.',
    member: 'Members can also run and edit Frames in the projects shared with the team.',
    admin: "Admins can also manage the team's members, invitations and shared projects.",
  },
  // An org member's role on the org's projects is the org's base role (CONTRACT 3a).
  org: {
    member:
      "Members see the organization and reach its projects with the role the organization's admins chose for all members.",
    admin:
      "Admins can also manage the organization's members and invitations, and administer all of its projects.",
  },
};
// How the page names what the invitation is to.
const NOUN = { team: 'Team', org: 'Organization' } as const;
const anAdmin = (p: Preview) => (p.kind === 'org' ? 'an organization admin' : 'a team admin');

const article = (role: string) => (/^[aeiou]/i.test(role) ? 'an' : 'a');
const roleLabel = (role: string) => role.charAt(0).toUpperCase() + role.slice(1);
const day = (iso: string) =>
  new Date(iso).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });

/** Why a closed invitation cannot be answered any more, in the invitee's words. */
function closedNotice(p: Preview): string {
  switch (p.status) {
    case 'accepted':
      return 'This invitation has already been accepted. Each invitation can be used once.';
    case 'expired':
      return `This invitation expired on ${e(day(p.expires_at))}. Ask ${p.inviter_name ? e(p.inviter_name) : anAdmin(p)} to send you a new one.`;
    default:
      return `This invitation was taken back or declined, so it can no longer be accepted. Ask ${anAdmin(p)} if you think this is a mistake.`;
  }
}

function facts(p: Preview): string {
  const expiry =
    p.status === 'pending' ? ` <span class="expiry">until ${e(day(p.expires_at))}</span>` : '';
  return `<dl class="facts">
<div><dt>${NOUN[p.kind]}</dt><dd id="fact-team">${e(p.team.name)}</dd></div>
<div><dt>Role</dt><dd id="fact-role">${e(roleLabel(p.role))}</dd></div>
<div><dt>Invited address</dt><dd id="fact-email">${e(p.email)}</dd></div>
<div><dt>Status</dt><dd id="fact-status"><span class="status status-${e(p.status)}">${e(roleLabel(p.status))}</span>${expiry}</dd></div>
</dl>`;
}

/** The sign-in, sign-up and answer controls; hidden until the script runs. */
function actions(p: Preview, token: string): string {
  return `<noscript><p class="notice">This page needs JavaScript to sign in and answer the invitation.</p></noscript>
<div id="message" class="message" role="alert" hidden></div>
<section id="invitation-actions" data-token="${e(token)}" data-kind="${e(p.kind)}" data-email="${e(p.email)}" data-team="${e(p.team.name)}" data-role="${e(p.role)}" hidden>
  <div id="signed-out">
    <form id="login-form" class="stack" method="post">
      <h2>Sign in to answer</h2>
      <label for="login-email">E-mail</label>
      <input id="login-email" name="email" type="email" autocomplete="username" required value="${e(p.email)}">
      <label for="login-password">Password</label>
      <input id="login-password" name="password" type="password" autocomplete="current-password" required>
      <button type="submit" class="primary">Sign in</button>
      <p class="switch">New to Frameplane? <button type="button" class="link" data-show="signup-form">Create an account</button></p>
    </form>
    <form id="signup-form" class="stack" method="post" hidden>
      <h2>Create your account</h2>
      <label for="signup-name">Your name <span class="optional">(optional)</span></label>
      <input id="signup-name" name="name" type="text" autocomplete="name" maxlength="100">
      <label for="signup-email">E-mail</label>
      <input id="signup-email" name="email" type="email" autocomplete="username" required value="${e(p.email)}">
      <label for="signup-password">Password</label>
      <input id="signup-password" name="password" type="password" autocomplete="new-password" required minlength="10" maxlength="1024" aria-describedby="signup-password-hint">
      <p id="signup-password-hint" class="hint">At least 10 characters.</p>
      <button type="submit" class="primary">Create account</button>
      <p class="switch">Already have an account? <button type="button" class="link" data-show="login-form">Sign in</button></p>
    </form>
    <p class="switch decline-line">Not for you? <button type="button" class="link" data-decline>Decline the invitation</button></p>
  </div>
  <div id="signed-in" hidden>
    <p class="who">Signed in as <strong id="signed-in-email"></strong>. <button type="button" class="link" id="sign-out">Use another account</button></p>
    <div class="buttons">
      <button type="button" class="primary" id="accept">Accept invitation</button>
      <button type="button" class="secondary" data-decline>Decline</button>
    </div>
  </div>
  <div id="confirm-decline" class="confirm" hidden>
    <p>Decline the invitation to join <strong>${e(p.team.name)}</strong>? The link will stop working.</p>
    <div class="buttons">
      <button type="button" class="danger" id="decline-yes">Yes, decline</button>
      <button type="button" class="secondary" id="decline-no">Cancel</button>
    </div>
  </div>
</section>
<div id="result" class="result" hidden><h2 id="result-title" tabindex="-1"></h2><p id="result-text"></p>
<p id="result-next" hidden><a id="result-link" href="/console">Open the console</a></p></div>`;
}

export function invitationPage(p: Preview, token: string, assets: Assets): string {
  const by = p.inviter_name ? `<strong>${e(p.inviter_name)}</strong> invited` : 'You are invited';
  const lead = p.inviter_name
    ? `${by} <strong>${e(p.email)}</strong> to join <strong>${e(p.team.name)}</strong> as ${article(p.role)} ${e(p.role)}.`
    : `${by} to join <strong>${e(p.team.name)}</strong> as ${article(p.role)} ${e(p.role)}.`;
  const open = p.status === 'pending';
  const hint = ROLE_HINTS[p.kind][p.role];
  const body = `<h1>${open ? 'Join' : 'Invitation to'} ${e(p.team.name)}</h1>
<p class="lead">${lead}</p>
${facts(p)}
${hint ? `<p class="hint">${e(hint)}</p>` : ''}
${open ? actions(p, token) : `<p class="notice" id="closed-notice">${closedNotice(p)}</p>`}`;
  return page({
    title: `Invitation to ${p.team.name} · Frameplane`,
    body,
    stylesheet: assets.stylesheet,
    script: open ? assets.script : undefined,
  });
}

export function notFoundPage(assets: Pick<Assets, 'stylesheet'>): string {
  return page({
    title: 'Invitation not found · Frameplane',
    stylesheet: assets.stylesheet,
    body: `<h1>Invitation not found</h1>
<p class="notice" id="closed-notice">This invitation does not exist or was taken back. Check that you opened the whole link from the e-mail, or ask a team admin to invite you again.</p>`,
  });
}
