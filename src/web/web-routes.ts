// Server-rendered pages outside the JSON API: the invitation page that the invitation e-mail
// links to, the page of the verification link (its token is in the fragment: nothing to
// render per token), and the site's icon. The token is in the URL, so the page is never
// cached and never leaks through a Referer. Scripts are separate files because the CSP (helmet) forbids inline
// ones; their URLs carry a content hash so a browser never pairs a page with an older script.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Services } from '../services.ts';
import { invitationPage, notFoundPage, type Assets } from './invitation-page.ts';
import { verifyPage } from './verify-page.ts';

const ASSETS = {
  'invitation.js': 'application/javascript; charset=utf-8',
  'invitation.css': 'text/css; charset=utf-8',
  'verify-email.js': 'application/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const;
type AssetName = keyof typeof ASSETS;
const BASE = '/invitations/assets';
// Same bound as the API's token parameter: longer strings cannot be tokens.
const MAX_TOKEN = 200;

async function loadAssets() {
  const files = {} as Record<AssetName, { body: Buffer; url: string }>;
  for (const name of Object.keys(ASSETS) as AssetName[]) {
    const body = await readFile(new URL(`./assets/${name}`, import.meta.url));
    const version = createHash('sha256').update(body).digest('hex').slice(0, 12);
    files[name] = { body, url: `${BASE}/${name}?v=${version}` };
  }
  return files;
}

function htmlPage(reply: FastifyReply, status: number, html: string) {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-robots-tag', 'noindex')
    .type('text/html; charset=utf-8')
    .send(html);
}

export function webRoutes(s: Pick<Services, 'invitations'>): FastifyPluginAsyncTypebox {
  return async (app) => {
    const files = await loadAssets();
    const assets: Assets = {
      stylesheet: files['invitation.css'].url,
      script: files['invitation.js'].url,
    };
    const hidden = { config: { auth: 'none' as const }, schema: { hide: true } };
    const verifyHtml = verifyPage({
      stylesheet: files['invitation.css'].url,
      script: files['verify-email.js'].url,
    });

    for (const name of Object.keys(ASSETS) as AssetName[]) {
      app.get(`${BASE}/${name}`, hidden, async (_req, reply) =>
        reply
          .header('cache-control', 'public, max-age=86400')
          .type(ASSETS[name])
          .send(files[name].body),
      );
    }

    // The icon every page links (html.ts, console/index.html), and at /favicon.ico, which a
    // browser asks for by itself (an SVG there is shown by today's browsers).
    for (const path of ['/favicon.svg', '/favicon.ico'])
      app.get(path, hidden, async (_req, reply) =>
        reply
          .header('cache-control', 'public, max-age=86400')
          .type(ASSETS['favicon.svg'])
          .send(files['favicon.svg'].body),
      );

    app.get<{ Params: { token: string } }>('/invitations/:token', hidden, async (req, reply) => {
      const token = req.params.token;
      const preview =
        token && token.length <= MAX_TOKEN ? await s.invitations.preview(token) : undefined;
      if (!preview) return htmlPage(reply, 404, notFoundPage(assets));
      return htmlPage(reply, 200, invitationPage(preview, token, assets));
    });

    app.get('/verify-email', hidden, async (_req, reply) => htmlPage(reply, 200, verifyHtml));
  };
}
