// The package the service serves at /downloads/frameplane.tgz: the CLI and the agent bundled by
// esbuild into one file, with no dependencies, so that `npm install -g <url>` needs no registry
// at all (and no name on one). esbuild is tsx's, which the service runs on already. The agent's
// sandbox script and port forwarder sit beside the bundle, where runtimes/sandbox.ts looks for
// them (next to the code that runs).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const root = new URL('../..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

// CommonJS dependencies (dockerode, pino) use require() and __dirname, which ESM lacks: the
// bundle starts with esm-banner.js. (A file, not a string here: the service's own bundle
// rewrites import.meta.url in its sources, scripts/server-build.mjs, strings included.)
const BANNER = readFileSync(new URL('./esm-banner.js', import.meta.url), 'utf8');

/**
 * The package's README: this checkout's README section on the command line, so that what
 * `npm install -g` leaves has the same words as the repository (`frameplane help exit-codes`
 * prints the exit codes too, for those who never open it).
 */
function packageReadme(): string {
  const title = `# frameplane\n\n${DESCRIPTION}\n`;
  const readme = existsSync(join(root, 'README.md'))
    ? readFileSync(join(root, 'README.md'), 'utf8')
    : '';
  const start = readme.indexOf('\n## The command line\n');
  if (start === -1) return `${title}\nRun \`frameplane --help\`.\n`;
  const end = readme.indexOf('\n## ', start + 1);
  return `${title}${readme.slice(start, end === -1 ? undefined : end)}\n`;
}

const DESCRIPTION = 'The Frameplane command line and agent, as served by a Frameplane service.';

export interface BuiltPackage {
  file: string;
  sha256: string;
  version: string;
}

/** Builds the package into `outDir` as frameplane.tgz; about two seconds. */
export async function buildPackage(outDir: string): Promise<BuiltPackage> {
  const work = mkdtempSync(join(tmpdir(), 'frameplane-package-'));
  try {
    const lib = join(work, 'lib');
    mkdirSync(lib);
    await build({
      entryPoints: [join(root, 'src/cli/entry.ts')],
      outfile: join(lib, 'frameplane.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      banner: { js: BANNER },
      // Optional native speed-ups of ssh2 (under dockerode); it runs without them.
      external: ['cpu-features', '*.node'],
      logLevel: 'error',
    });
    for (const f of ['sandbox.sh', 'forwarder.mjs'])
      copyFileSync(join(root, 'src/runner/runtimes', f), join(lib, f));
    writeFileSync(
      join(work, 'bin.mjs'),
      "#!/usr/bin/env node\nawait import('./lib/frameplane.mjs');\n",
    );
    const manifest = {
      name: 'frameplane',
      version: pkg.version,
      description: DESCRIPTION,
      type: 'module',
      bin: { frameplane: 'bin.mjs' },
      engines: pkg.engines,
      files: ['bin.mjs', 'lib/'],
      private: true,
    };
    writeFileSync(join(work, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(join(work, 'README.md'), packageReadme());
    const { stdout } = await promisify(execFile)(
      'npm',
      ['pack', '--json', '--pack-destination', work],
      { cwd: work, env: { ...process.env, npm_config_update_notifier: 'false' } },
    );
    const packed = JSON.parse(stdout)[0].filename as string;
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, 'frameplane.tgz');
    copyFileSync(join(work, packed), file);
    const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
    return { file, sha256, version: pkg.version };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
