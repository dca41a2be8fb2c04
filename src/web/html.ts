// The few pieces every server-rendered page needs: escaping and the document shell. Pages are
// plain template strings; every interpolated value goes through `escapeHtml`, so a team named
// `<script>` is shown, never run.

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Safe in text and in double- or single-quoted attribute values. */
export const escapeHtml = (value: unknown) =>
  String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

export interface Shell {
  title: string;
  body: string;
  stylesheet: string;
  script?: string;
}

/** The document around a page. Scripts and styles are separate files: the CSP forbids inline scripts. */
export function page({ title, body, stylesheet, script }: Shell): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${escapeHtml(stylesheet)}">
${script ? `<script src="${escapeHtml(script)}" defer></script>\n` : ''}</head>
<body>
<main class="card">
<p class="brand">Frameplane</p>
${body}
</main>
</body>
</html>
`;
}
