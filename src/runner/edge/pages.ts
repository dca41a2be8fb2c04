// The edge's own answers (CONTRACT 5b): small HTML pages that say why no app answers. Never an
// app's content: a stopped frame's last words, or one tenant's page under another's host,
// must not leak through them. Sent with headers that keep caches and browsers from taking one
// for the app's own answer (no-store, nosniff).
import { STATUS_CODES } from 'node:http';

export type EdgePage =
  | 'unknown_host'
  | 'stopped'
  | 'suspended'
  | 'starting'
  | 'bad_gateway'
  | 'gateway_timeout'
  | 'bad_request'
  | 'too_large';

/** Seconds a client is asked to wait before it tries a frame that is starting again. */
export const RETRY_AFTER_SECONDS = 5;

const PAGES: Record<EdgePage, { status: number; title: string; text: string }> = {
  unknown_host: {
    status: 404,
    title: 'No app here',
    text: 'No app is served at this address.',
  },
  stopped: {
    status: 503,
    title: 'App stopped',
    text: 'This app is stopped. Its owner can start it again.',
  },
  suspended: {
    status: 503,
    title: 'App suspended',
    text: "This app is suspended because its owner's billing is past due.",
  },
  starting: {
    status: 503,
    title: 'App starting',
    text: 'This app is starting and does not answer yet. Try again in a few seconds.',
  },
  bad_gateway: {
    status: 502,
    title: 'App not answering',
    text: 'This app could not be reached. Try again in a few seconds.',
  },
  gateway_timeout: {
    status: 504,
    title: 'App too slow',
    text: 'This app took too long to answer.',
  },
  too_large: {
    status: 413,
    title: 'Request too large',
    text: "The request's body is larger than this edge accepts.",
  },
  bad_request: {
    status: 400,
    title: 'Bad request',
    text: 'The edge refused this request: it is malformed or ambiguous.',
  },
};

export interface Page {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const htmlText = (s: string) => s.slice(0, 300).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page of this kind; `host` (as the client sent it, escaped) says which address. */
export function page(kind: EdgePage, host?: string): Page {
  const p = PAGES[kind];
  const where = host ? `<p><code>${htmlText(host)}</code></p>\n` : '';
  const body = Buffer.from(
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
      `<title>${p.status} ${p.title}</title></head>\n<body><h1>${p.title}</h1>\n` +
      `<p>${p.text}</p>\n${where}<hr><p>frameplane edge</p></body></html>\n`,
  );
  const headers: Record<string, string> = {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(body.length),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-frameplane-edge': kind,
  };
  if (kind === 'starting') headers['retry-after'] = String(RETRY_AFTER_SECONDS);
  return { status: p.status, headers, body };
}

/** The page as raw HTTP/1.1 bytes, for a connection no longer under the HTTP server (upgrades). */
export function rawPage(p: Page): Buffer {
  const head = [`HTTP/1.1 ${p.status} ${STATUS_CODES[p.status] ?? ''}`];
  for (const [k, v] of Object.entries(p.headers)) head.push(`${k}: ${v}`);
  head.push('connection: close', '', '');
  return Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), p.body]);
}
