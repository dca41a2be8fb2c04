// GET /downloads/frameplane.tgz: the CLI and the agent as one npm package, so that another
// machine installs them from this service (`npm install -g <server>/downloads/frameplane.tgz`)
// and never from a public registry. Built once per process on the first request (about two
// seconds), so it always matches the running code; kept in memory (under half a megabyte).
// GET /downloads/frameplane.tgz.sha256 gives its checksum in sha256sum's format. Not part of
// the JSON API, so not in the OpenAPI document, like the web pages.
import type { FastifyPluginAsync } from 'fastify';
import { readFile, rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceUnavailable } from '../errors.ts';
import { buildPackage } from './package-build.ts';

interface Download {
  body: Buffer;
  sha256: string;
  version: string;
}

async function build(): Promise<Download> {
  const dir = await mkdtemp(join(tmpdir(), 'frameplane-download-'));
  try {
    const built = await buildPackage(dir);
    return { body: await readFile(built.file), sha256: built.sha256, version: built.version };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function downloadRoutes(): FastifyPluginAsync {
  return async (app) => {
    let pending: Promise<Download> | undefined;
    const download = async () => {
      pending ??= build();
      try {
        return await pending;
      } catch (err) {
        pending = undefined; // a later request tries again
        app.log.error({ err }, 'building the downloadable package failed');
        throw serviceUnavailable(
          'package_unavailable',
          'The package could not be built; see the log.',
        );
      }
    };
    const hidden = { config: { auth: 'none' as const }, schema: { hide: true } };

    app.get('/downloads/frameplane.tgz', hidden, async (req, reply) => {
      const d = await download();
      const etag = `"${d.sha256}"`;
      reply
        .header('etag', etag)
        .header('cache-control', 'no-cache')
        .header('content-disposition', `attachment; filename="frameplane-${d.version}.tgz"`);
      if (req.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type('application/gzip').send(d.body);
    });
    app.get('/downloads/frameplane.tgz.sha256', hidden, async (_req, reply) => {
      const d = await download();
      return reply
        .header('cache-control', 'no-cache')
        .type('text/plain; charset=utf-8')
        .send(`${d.sha256}  frameplane.tgz\n`);
    });
  };
}
