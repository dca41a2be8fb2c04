// Serves the web console: index.html at `/` and at every client-side route under `/console/`,
// its hashed assets under `/console/assets/` with a year's cache. Everything else (the API under
// /v2, the invitation pages) is untouched, so an unknown /v2 path is still the API's 404.
// The build (console-build.ts) runs on the first request, or when `warm()` is called at start,
// and is kept in memory: a few hundred kilobytes.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { AppError, serviceUnavailable } from '../errors.ts';
import { type BuildLog, buildConsole } from './console-build.ts';

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

interface Built {
  index: Buffer;
  assets: Map<string, Buffer>;
}

async function load(log?: BuildLog): Promise<Built> {
  const dir = await buildConsole(log);
  const assets = new Map<string, Buffer>();
  const names = await readdir(join(dir, 'assets')).catch(() => []);
  for (const name of names) assets.set(name, await readFile(join(dir, 'assets', name)));
  return { index: await readFile(join(dir, 'index.html')), assets };
}

export interface ConsoleBuild {
  get(): Promise<Built>;
}

/** The console's build, made once per process; a failed build is tried again next time. */
export function consoleBuild(log?: BuildLog): ConsoleBuild {
  let pending: Promise<Built> | undefined;
  return {
    async get() {
      pending ??= load(log);
      try {
        return await pending;
      } catch (err) {
        pending = undefined;
        log?.error({ err }, 'building the console failed');
        throw serviceUnavailable('console_unavailable', 'The console could not be built.');
      }
    },
  };
}

const notFound = () =>
  new AppError(404, 'route_not_found', 'Not found', 'No such file in the console.');

export function consoleRoutes(build: ConsoleBuild): FastifyPluginAsync {
  return async (app) => {
    const hidden = { config: { auth: 'none' as const }, schema: { hide: true } };
    const index = async (_req: unknown, reply: FastifyReply) => {
      const { index } = await build.get();
      // Always asked again, so a new build's asset names reach the browser at once.
      return reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
    };
    app.get('/', hidden, index);
    app.get('/console', hidden, index);
    app.get('/console/*', hidden, index);
    app.get<{ Params: { '*': string } }>('/console/assets/*', hidden, async (req, reply) => {
      const name = req.params['*'];
      const body = (await build.get()).assets.get(name);
      const type = TYPES[extname(name)];
      if (!body || !type) throw notFound();
      // The name carries the content's hash: it never changes under the same URL.
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type(type)
        .send(body);
    });
  };
}
