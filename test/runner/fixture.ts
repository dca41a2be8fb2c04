// What the agent's end-to-end tests share: a real bare git repository holding a tiny Node app,
// plain HTTP requests on fresh connections (to a frame through the agent's edge, by its
// hostname), the app's processes as the kernel lists them.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { type Agent, request } from 'node:http';
import { join } from 'node:path';
import { waitFor } from '../helpers/wait.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A Dockerfile whose image asks for a read-only root (issue 40) and runs `script` as `user`.
 * The code is the user's own, so that only the read-only root keeps the app from writing there.
 */
export const readOnlyRootDockerfile = (baseImage: string, script: string, user = '1000:1000') =>
  [
    `FROM ${baseImage}`,
    `COPY --chown=${user} . /app`,
    'WORKDIR /app',
    `USER ${user}`,
    'LABEL frameplane.read-only-root=true',
    `CMD ["node", "${script}"]`,
    '',
  ].join('\n');

/**
 * The files of an app whose image asks for a read-only root and which answers, as JSON, what
 * it could write: `/app` (its root), `/tmp` and `/data` (a volume), each `true` or the error code.
 */
export const readOnlyRootApp = (baseImage: string, user?: string) => ({
  Dockerfile: readOnlyRootDockerfile(baseImage, 'ro.js', user),
  'ro.js': `const fs = require('fs');
const can = (p) => { try { fs.writeFileSync(p, 'x'); return true; } catch (e) { return e.code; } };
const said = JSON.stringify({ root: can('/app/w'), tmp: can('/tmp/w'), data: can('/data/w') });
require('http').createServer((q, s) => s.end(said)).listen(Number(process.env.PORT));`,
});

/** git as a test's author, with `main` as the first branch. */
export function git(cwd: string, ...args: string[]) {
  return execFileSync(
    'git',
    [
      '-c',
      'user.name=Test',
      '-c',
      'user.email=test@example.test',
      '-c',
      'init.defaultBranch=main',
      ...args,
    ],
    { cwd, stdio: 'pipe' },
  ).toString();
}

/**
 * A bare repository at <root>/git/acme/app.git (so GIT_BASE_URL is file://<root>/git) and a
 * working copy that pushes to its `main`.
 */
export function gitFixture(root: string) {
  const gitRoot = join(root, 'git');
  const bare = join(gitRoot, 'acme', 'app.git');
  const work = join(root, 'work');
  mkdirSync(join(gitRoot, 'acme'), { recursive: true });
  git(root, 'init', '-q', '--bare', bare);
  git(root, 'init', '-q', work);
  git(work, 'remote', 'add', 'origin', bare);
  return {
    gitBaseUrl: `file://${gitRoot}`,
    /** Commits these files (and removes none) and pushes them to main; answers the commit. */
    pushFiles(files: Record<string, string>, message: string, branch = 'main'): string {
      for (const [name, text] of Object.entries(files)) writeFileSync(join(work, name), text);
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', message);
      git(work, 'push', '-q', 'origin', `HEAD:${branch}`);
      return git(work, 'rev-parse', 'HEAD').trim();
    },
    /** Commits the app at `version` (or one that exits at once) and pushes it to `branch`;
     *  answers the commit. */
    pushApp(version: string, crash = false, branch = 'main') {
      writeFileSync(
        join(work, 'package.json'),
        JSON.stringify(
          { name: 'demo', version: '1.0.0', private: true, scripts: { start: 'node server.js' } },
          null,
          2,
        ),
      );
      writeFileSync(
        join(work, 'server.js'),
        crash
          ? `console.log('app ${version} failing on purpose'); process.exit(1);\n`
          : [
              `const http = require('http');`,
              `const port = Number(process.env.PORT);`,
              // GREETING shows which env a release runs (config releases, rollbacks).
              `const greeting = process.env.GREETING ? ' ' + process.env.GREETING : '';`,
              `http.createServer((req, res) => res.end('hello ${version} from ' + process.env.FRAMEPLANE_REPLICA + greeting)).listen(port, () => console.log('app ${version} listening on ' + port));`,
            ].join('\n'),
      );
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', `app ${version}`);
      git(work, 'push', '-q', 'origin', `HEAD:${branch}`);
      return git(work, 'rev-parse', 'HEAD').trim();
    },
  };
}

export type Hit =
  | { status: number; body: string; headers: Record<string, unknown> }
  | { error: string };

/** One GET on a fresh connection (no keep-alive, so the edge's round-robin shows). */
export function hit(
  port: number,
  path = '/',
  host?: string,
  timeoutMs = 3000,
  /** A keep-alive agent to go through; none: a connection of its own. */
  agent: Agent | false = false,
): Promise<Hit> {
  return new Promise((done) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        agent,
        timeout: timeoutMs,
        headers: host ? { host } : {},
      },
      (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (c) => (body += c))
          .on('end', () => done({ status: res.statusCode!, body, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => done({ error: err.code ?? err.message }));
    req.end();
  });
}

/**
 * One GET to a frame through an agent's edge: to loopback, with the frame's hostname as Host
 * (`*.localhost` does not resolve in Node, and tests send traffic to loopback only).
 */
export function hitFrame(
  edgePort: number,
  hostname: string,
  path = '/',
  timeoutMs = 3000,
): Promise<Hit> {
  return hit(edgePort, path, hostname, timeoutMs);
}

/** Whether a hit is the edge's own page of this kind (x-frameplane-edge), not an app's answer. */
export const isEdgePage = (r: Hit, kind: string) =>
  'headers' in r && r.headers['x-frameplane-edge'] === kind;

/** Polls `fn` until it gives something truthy; the error carries `context()` (say, agent output). */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  context = () => '',
): Promise<T> {
  return (await waitFor(what, fn, { timeoutMs, everyMs: 250, context })) as T;
}

/** Sends `signal` to `child` and waits until it has exited (its pid reaped, its ports free). */
export async function killAndWait(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') {
  child.kill(signal);
  await waitFor(
    `process ${child.pid} to exit on ${signal}`,
    () => child.exitCode !== null || child.signalCode !== null,
  );
}

/** Live processes of the app (`node server.js`) whose working directory is under `root`. */
export function appProcesses(root: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes('server.js'))
        continue;
      if (!readlinkSync(`/proc/${name}/cwd`).startsWith(root)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue; // dead, not yet reaped
      pids.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}

/** Kills whatever of the app is left under `root`, group and all (a failed test must not leave servers behind). */
export function killApps(root: string) {
  for (const pid of appProcesses(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      process.kill(pgid > 1 ? -pgid : pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}
