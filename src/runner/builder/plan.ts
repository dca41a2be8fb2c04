// How to build and run a checkout that brings no Dockerfile, the way a Heroku user expects:
// dependencies installed when package.json has any (`npm ci` with a lock file), `npm run build`
// when it defines one, and the `web:` process of a Procfile, else `npm start`, as the command.
import { entryKind, readTenantText, TenantFileError } from '../tenant-files.ts';

export interface RunPlan {
  /** Build steps, each run with `sh -c` in the checkout. */
  build: string[];
  /** The web process, run with `sh -c`. */
  command: string;
}

/** Process types of a Procfile (`name: command` lines; comments and blanks skipped). */
export function parseProcfile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const m = /^([A-Za-z0-9_-]+)\s*:\s*(.*\S)\s*$/.exec(raw);
    if (m?.[1] && m[2] && !raw.trimStart().startsWith('#')) out[m[1]] = m[2];
  }
  return out;
}

interface PackageJson {
  scripts?: Record<string, string>;
  dependencies?: object;
  devDependencies?: object;
  optionalDependencies?: object;
}

export interface CheckoutFiles {
  procfile?: string;
  packageJson?: string;
  hasServerJs?: boolean;
  hasLockFile?: boolean;
}

/** The plan for a checkout, from what it contains; an Error says why it cannot run. */
export function runPlan(files: CheckoutFiles): RunPlan | Error {
  let pkg: PackageJson | undefined;
  if (files.packageJson !== undefined) {
    try {
      pkg = JSON.parse(files.packageJson) as PackageJson;
    } catch {
      return new Error('package.json is not valid JSON');
    }
  }
  const build: string[] = [];
  if (pkg) {
    const deps = [pkg.dependencies, pkg.devDependencies, pkg.optionalDependencies].some(
      (d) => d && Object.keys(d).length > 0,
    );
    if (deps)
      build.push(
        files.hasLockFile ? 'npm ci --no-audit --no-fund' : 'npm install --no-audit --no-fund',
      );
    if (pkg.scripts?.build) build.push('npm run build');
  }
  const web = files.procfile !== undefined ? parseProcfile(files.procfile).web : undefined;
  if (web) return { build, command: web };
  if (pkg && (pkg.scripts?.start || files.hasServerJs)) return { build, command: 'npm start' };
  if (pkg) return new Error('package.json has no "start" script and there is no server.js');
  return new Error(
    'nothing to run: add a Dockerfile, a Procfile with a "web:" line, or a package.json with a "start" script',
  );
}

/**
 * The plan of a checkout, read without trusting it (tenant-files.ts): a Procfile or package.json
 * that is a link or not a regular file is a reason the checkout cannot run, in the plan's words.
 */
export function planOf(dir: string): RunPlan | Error {
  try {
    return runPlan({
      procfile: readTenantText(dir, 'Procfile'),
      packageJson: readTenantText(dir, 'package.json'),
      // Only whether they are there: npm and node open them inside the app's confinement.
      hasServerJs: entryKind(dir, 'server.js') !== undefined,
      hasLockFile: entryKind(dir, 'package-lock.json') !== undefined,
    });
  } catch (err) {
    if (err instanceof TenantFileError)
      return new Error(`${err.message}: Frameplane reads only regular files of a repository`);
    throw err;
  }
}
