// Builds the web console (console/) with Vite's JS API. The output is kept under
// node_modules/.cache/frameplane-console/<hash>/, where <hash> covers every input (the console's
// sources, the SDK it imports, this file and the lock file), so the first start after a change
// builds once (a few seconds) and every later start finds the build ready.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, constants, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CONSOLE_DIR = join(ROOT, 'console');
const CACHE = join(ROOT, 'node_modules', '.cache', 'frameplane-console');
// Where the build goes when node_modules is read-only (an installed, locked-down service).
const FALLBACK = join(tmpdir(), 'frameplane-console');
// What the build reads: the console, the SDK it imports, how it is built, the exact packages.
const INPUTS = [CONSOLE_DIR, join(ROOT, 'src', 'sdk'), fileURLToPath(import.meta.url)];
const LOCK = join(ROOT, 'package-lock.json');
// Builds of other sources (other checkouts share node_modules) are pruned after a week.
const KEEP_MS = 7 * 24 * 3600_000;

async function files(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(
    entries
      .filter((e) => !e.name.startsWith('.') && !e.name.endsWith('.test.ts'))
      .map((e) => files(join(path, e.name))),
  );
  return nested.flat();
}

/** One hash of every file the build reads, by path and content. */
export async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const all = (await Promise.all(INPUTS.map(files))).flat().sort();
  if (existsSync(LOCK)) all.push(LOCK);
  for (const file of all) {
    hash.update(file.slice(ROOT.length)).update('\0');
    hash.update(await readFile(file)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** The cache folder, or the fallback when node_modules cannot be written. */
async function cacheDir(): Promise<string> {
  try {
    await mkdir(CACHE, { recursive: true });
    await access(CACHE, constants.W_OK);
    return CACHE;
  } catch {
    await mkdir(FALLBACK, { recursive: true });
    return FALLBACK;
  }
}

async function pruneOld(cache: string, keep: string) {
  const now = Date.now();
  for (const name of await readdir(cache).catch(() => [])) {
    if (name === keep) continue;
    const dir = join(cache, name);
    // Another process may be renaming or pruning it right now.
    const made = await stat(dir).catch(() => undefined);
    if (made && now - made.mtimeMs > KEEP_MS) await rm(dir, { recursive: true, force: true });
  }
}

export interface BuildLog {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
  error(o: object, msg: string): void;
}

/** Vite's messages through the service's log, so that its output stays one JSON line each. */
function viteLogger(log: BuildLog) {
  const warned = new Set<string>();
  return {
    hasWarned: false,
    info: (msg: string) => log.info({ vite: msg }, 'console build'),
    warn(msg: string) {
      this.hasWarned = true;
      log.warn({ vite: msg }, 'console build');
    },
    warnOnce(msg: string) {
      if (!warned.has(msg)) this.warn(msg);
      warned.add(msg);
    },
    error: (msg: string) => log.error({ vite: msg }, 'console build'),
    clearScreen() {},
    hasErrorLogged: () => false,
  };
}

const quiet: BuildLog = { info() {}, warn() {}, error() {} };

/** The directory of the console's build for the current sources, built if missing. */
export async function buildConsole(log: BuildLog = quiet): Promise<string> {
  const hash = await sourceHash();
  for (const cache of [CACHE, FALLBACK])
    if (existsSync(join(cache, hash, 'index.html'))) return join(cache, hash);
  const cache = await cacheDir();
  const dir = join(cache, hash);
  // Built aside and renamed into place: a process that finds the directory finds it whole.
  const tmp = join(cache, `${hash}.tmp-${process.pid}-${Date.now()}`);
  const [{ build }, { default: react }] = await Promise.all([
    import('vite'),
    import('@vitejs/plugin-react'),
  ]);
  await build({
    configFile: false,
    root: CONSOLE_DIR,
    base: '/console/',
    logLevel: 'warn',
    customLogger: viteLogger(log),
    plugins: [react()],
    build: {
      outDir: tmp,
      emptyOutDir: true,
      // The polyfill would be a script of its own; every browser we support has modulepreload.
      modulePreload: { polyfill: false },
      reportCompressedSize: false,
      // One bundle (React, the router, the query cache, the SDK) of about 400 kB is expected.
      chunkSizeWarningLimit: 1024,
    },
  });
  try {
    await rename(tmp, dir);
  } catch (err) {
    // Another process built the same sources first: theirs is as good.
    await rm(tmp, { recursive: true, force: true });
    if (!existsSync(join(dir, 'index.html'))) throw err;
  }
  await pruneOld(cache, hash);
  log.info({ dir }, 'console built');
  return dir;
}
