// From a deployment to a runnable directory: fetch the repository at the branch (or the pushed
// commit) with the git CLI into DATA_DIR/frames/<frame>/<deployment>, then build it the way a
// Heroku user expects: dependencies installed when package.json has any, `npm run build` when
// it defines one, and the `web:` process of a Procfile, else `npm start`, as the command.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface RunPlan {
  /** Build steps, each run with `sh -c` in the checkout. */
  build: string[];
  /** The web process, run with `sh -c`. */
  command: string;
}

/** Where the git host keeps owner/repo: a URL (https://, file://…) or a plain directory. */
export function repositoryUrl(base: string, owner: string, repo: string): string {
  for (const name of [owner, repo]) {
    // The server allows [A-Za-z0-9._-]; dots alone would climb out of the base.
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(name) || /^\.+$/.test(name)) throw new Error(`invalid repository name "${name}"`);
  }
  return `${base.replace(/\/+$/, '')}/${owner}/${repo.replace(/\.git$/, '')}.git`;
}

/** Process types of a Procfile (`name: command` lines; comments and blanks skipped). */
export function parseProcfile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const m = /^([A-Za-z0-9_-]+)\s*:\s*(.*\S)\s*$/.exec(raw);
    if (m && !raw.trimStart().startsWith('#')) out[m[1]] = m[2];
  }
  return out;
}

interface PackageJson { scripts?: Record<string, string>; dependencies?: object; devDependencies?: object; optionalDependencies?: object }

/** How to build and run a checkout, from what it contains; an Error says why it cannot run. */
export function runPlan(files: { procfile?: string; packageJson?: string; hasServerJs?: boolean }): RunPlan | Error {
  let pkg: PackageJson | undefined;
  if (files.packageJson !== undefined) {
    try { pkg = JSON.parse(files.packageJson) as PackageJson; } catch { return new Error('package.json is not valid JSON'); }
  }
  const build: string[] = [];
  if (pkg) {
    const deps = [pkg.dependencies, pkg.devDependencies, pkg.optionalDependencies].some((d) => d && Object.keys(d).length > 0);
    if (deps) build.push('npm install --no-audit --no-fund');
    if (pkg.scripts?.build) build.push('npm run build');
  }
  const web = files.procfile !== undefined ? parseProcfile(files.procfile).web : undefined;
  if (web) return { build, command: web };
  if (pkg && (pkg.scripts?.start || files.hasServerJs)) return { build, command: 'npm start' };
  if (pkg) return new Error('package.json has no "start" script and there is no server.js');
  return new Error('nothing to run: add a Procfile with a "web:" line, or a package.json with a "start" script');
}

export function planOf(dir: string): RunPlan | Error {
  const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : undefined);
  return runPlan({ procfile: read('Procfile'), packageJson: read('package.json'), hasServerJs: existsSync(join(dir, 'server.js')) });
}

export class SourceError extends Error {
  constructor(readonly reason: 'image_pull_failed' | 'build_failed', message: string) { super(message); }
}

export interface FetchSpec {
  gitBaseUrl: string; owner: string; repo: string; branch: string; commitSha: string | null;
}

interface Prepared { dir: string; command: string }

const BUILT = '.frameplane-built';

/** Runs a command, feeding its output to `onLine`; rejects with the last lines on failure. */
function run(cmd: string, args: string[], o: { cwd: string; env: NodeJS.ProcessEnv; onLine: (l: string) => void; signal?: AbortSignal; timeoutMs: number }) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const tail: string[] = [];
    const kill = () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } };
    const timer = setTimeout(kill, o.timeoutMs);
    o.signal?.addEventListener('abort', kill, { once: true });
    for (const stream of [child.stdout!, child.stderr!]) {
      let partial = '';
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) { o.onLine(l); tail.push(l); if (tail.length > 5) tail.shift(); }
      });
    }
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', kill);
      if (code === 0) resolve();
      else reject(new Error(`${[cmd, ...args].join(' ')} failed (${signal ?? `exit ${code}`})${tail.length ? `: ${tail.join(' | ')}` : ''}`));
    });
  });
}

/**
 * Fetches and builds one deployment, once: a directory already built for it is reused (a
 * stop and start does not fetch again). Work happens in a temporary directory renamed at the
 * end, so a half-done fetch is never mistaken for a finished one.
 */
export async function prepareSource(o: {
  framesDir: string; frameId: string; deploymentId: string; source: FetchSpec;
  /** For git: no frame settings, which could redirect it (GIT_DIR, GIT_SSH_COMMAND…). */
  gitEnv: NodeJS.ProcessEnv;
  /** For the build steps: the frame's env is there, as on Heroku. */
  buildEnv: NodeJS.ProcessEnv;
  onLine: (line: string) => void;
  /** The fetch is done and the build begins. */
  onBuild?: () => void;
  signal?: AbortSignal;
}): Promise<Prepared> {
  for (const id of [o.frameId, o.deploymentId]) if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new SourceError('image_pull_failed', `invalid id "${id}"`);
  const dir = join(o.framesDir, o.frameId, o.deploymentId);
  if (existsSync(join(dir, BUILT))) {
    const plan = planOf(dir);
    if (!(plan instanceof Error)) return { dir, command: plan.command };
  }
  const work = `${dir}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(dirname(dir), { recursive: true });
  const env = { ...o.gitEnv, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo' };
  const common = { cwd: dirname(dir), env, onLine: o.onLine, signal: o.signal, timeoutMs: 5 * 60_000 };
  try {
    let url: string;
    try { url = repositoryUrl(o.source.gitBaseUrl, o.source.owner, o.source.repo); } catch (err) { throw new SourceError('image_pull_failed', (err as Error).message); }
    try {
      await run('git', ['clone', '--quiet', '--depth', '1', '--branch', o.source.branch, '--', url, work], common);
      if (o.source.commitSha) await checkoutCommit(work, o.source.commitSha, { ...common, cwd: work });
    } catch (err) {
      throw new SourceError('image_pull_failed', (err as Error).message);
    }
    o.onBuild?.();
    const plan = planOf(work);
    if (plan instanceof Error) throw new SourceError('build_failed', plan.message);
    try {
      for (const step of plan.build) {
        o.onLine(`[frameplane] ${step}`);
        await run('sh', ['-c', step], { ...common, env: o.buildEnv, cwd: work, timeoutMs: 15 * 60_000 });
      }
    } catch (err) {
      throw new SourceError('build_failed', (err as Error).message);
    }
    writeFileSync(join(work, BUILT), new Date().toISOString());
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
    return { dir, command: plan.command };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The pushed commit, when the branch head has moved on since: fetched by id, else deepened. */
async function checkoutCommit(work: string, sha: string, common: Parameters<typeof run>[2]) {
  if (!/^[0-9a-f]{7,64}$/i.test(sha)) return; // not a commit id we can use: the branch head stands
  const head = await new Promise<string>((resolve) => {
    const lines: string[] = [];
    run('git', ['rev-parse', 'HEAD'], { ...common, onLine: (l) => lines.push(l) }).then(() => resolve(lines[0] ?? ''), () => resolve(''));
  });
  if (head.startsWith(sha.toLowerCase())) return;
  try {
    await run('git', ['fetch', '--quiet', '--depth', '1', 'origin', sha], common);
  } catch {
    await run('git', ['fetch', '--quiet', '--unshallow', 'origin'], common);
  }
  await run('git', ['checkout', '--quiet', '--detach', sha], common);
}

/** Removes the directories of deployments other than `keep` (and leftovers of failed fetches). */
export function pruneDeployments(framesDir: string, frameId: string, keep: Set<string>) {
  const root = join(framesDir, frameId);
  if (!existsSync(root)) return;
  for (const name of readdirSync(root)) {
    if (name === 'logs' || keep.has(name)) continue;
    if (name.includes('.tmp-') && name.includes(`.tmp-${process.pid}-`)) continue; // a fetch of ours in progress
    rmSync(join(root, name), { recursive: true, force: true });
  }
}
