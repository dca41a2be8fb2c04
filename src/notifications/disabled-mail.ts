// The e-mail a project's admins get when the service turns off an endpoint that kept failing:
// what stopped, since when, and how to turn it back on.

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

export interface DisabledMail {
  to: string;
  projectName: string;
  projectId: string;
  endpointId: string;
  url: string;
  failures: number;
  failingSince: Date;
  lastError: string | null;
  /** The project's page in the console. */
  link: string;
}

export function disabledEmail(m: DisabledMail) {
  const subject = `Frameplane turned off a notification endpoint of ${m.projectName}`;
  const since = m.failingSince.toUTCString();
  const enable = `frameplane notifications update ${m.endpointId} --enable -p ${m.projectId}`;
  const lines = [
    'Hello,',
    '',
    `The notification endpoint ${m.url} of the project "${m.projectName}" has failed every ` +
      `delivery since ${since} (${m.failures} tries in a row), so Frameplane stopped sending ` +
      'to it. Events from now on are not queued for it.',
    ...(m.lastError ? ['', `The last try: ${m.lastError}`] : []),
    '',
    'Once the receiver works again, turn the endpoint back on (its failures start from zero):',
    enable,
    '',
    `Its delivery log tells what each try got back: ${m.link}`,
    '',
    'You get this e-mail as an admin of the project.',
  ];
  const style = 'font-family:system-ui,sans-serif;line-height:1.5;color:#1b1f24';
  const html = `<!doctype html><html><body style="${style}">
<p>Hello,</p>
<p>The notification endpoint <code>${escapeHtml(m.url)}</code> of the project
<strong>${escapeHtml(m.projectName)}</strong> has failed every delivery since ${escapeHtml(since)}
(${m.failures} tries in a row), so Frameplane stopped sending to it. Events from now on are not
queued for it.</p>
${m.lastError ? `<p>The last try: ${escapeHtml(m.lastError)}</p>` : ''}
<p>Once the receiver works again, turn the endpoint back on (its failures start from zero):<br>
<code>${escapeHtml(enable)}</code></p>
<p><a href="${escapeHtml(m.link)}">Open the project</a> to read its delivery log.</p>
<p style="font-size:13px;color:#57606a">You get this e-mail as an admin of the project.</p>
</body></html>`;
  return { subject, text: lines.join('\n'), html };
}
