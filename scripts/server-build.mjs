// Bundles a TypeScript entry of the service (src/main.ts; the bench's service process) with
// esbuild into one ES module, so that it runs on plain Node.js: no TypeScript loader at run
// time. tsx's loader runs in a thread of its own, with its own V8 heap: about 45 MB resident for
// an empty program. Dependencies stay outside the bundle, imported from node_modules as usual.
// Plain JavaScript, because `npm start` runs it before anything can read TypeScript.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(root, 'node_modules/.cache/frameplane');

// A module that finds its files beside itself (migrations, page assets, the sandbox script)
// reads import.meta.url: in the bundle each keeps the URL of its own source file.
const ownUrls = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: 'ts',
    }));
  },
};

/** Bundles `entry` (relative to the repository) and answers the bundle's path. */
export async function buildServer(entry, name) {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    write: false,
    outfile: join(OUT, `${name}.mjs`),
    plugins: [ownUrls],
    logLevel: 'error',
  });
  // Several services may start at once from one checkout: each writes its own files, then
  // renames them over the bundle and its map, so that none imports a half-written one.
  mkdirSync(OUT, { recursive: true });
  const suffix = `.${randomBytes(6).toString('hex')}.tmp`;
  for (const out of result.outputFiles) writeFileSync(out.path + suffix, out.contents);
  for (const out of result.outputFiles) renameSync(out.path + suffix, out.path);
  const bundle = result.outputFiles.find((f) => f.path.endsWith('.mjs'));
  if (!bundle) throw new Error(`esbuild wrote no bundle for ${entry}`);
  return bundle.path;
}
