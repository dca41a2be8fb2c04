// A hostile repository, as a tenant could commit it: every name the agent reads or once wrote
// in a checkout made a symbolic link to a file of the host (the "victim"), or a FIFO made by
// the running app. One branch per attack, each otherwise a working app, so that a test deploys
// the branch and then checks that the victim is untouched and the agent still works.
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { git } from '../runner/fixture.ts';

/** What the victim's secret holds before any attack; it must hold it after. */
export const VICTIM_SECRET = 'victim-secret-0123456789abcdef';

/** The branches of the hostile repository, by what each tries. */
export const ATTACKS = {
  /** A dangling `Dockerfile` link: an agent writing a generated Dockerfile creates the target. */
  dockerfileLink: 'dockerfile-link',
  /** `Procfile` linked to the victim: an agent reading it copies a host file into the plan. */
  procfileLink: 'procfile-link',
  /** `package.json` linked to /dev/zero: an agent reading it never ends, or runs out of memory. */
  packageLink: 'package-link',
  /** The process runtime's old marker name linked to the victim: an agent writing it overwrites it. */
  markerLink: 'marker-link',
  /** An app that, once running, turns every name the agent reads into a FIFO. */
  fifoMaker: 'fifo-maker',
} as const;

export const APP = String.raw`
const http = require('http');
http.createServer((req, res) => res.end(req.url === '/cwd' ? process.cwd() : 'hostile up'))
  .listen(Number(process.env.PORT), () => console.log('hostile app listening'));
`;

// Made by the app at its start, in its own directory (the process runtime's checkout).
const FIFO_MAKER = String.raw`
const { execFileSync } = require('child_process');
const fs = require('fs');
for (const name of ['Procfile', 'package.json', '.frameplane-built', 'Dockerfile', 'server.js']) {
  try { fs.rmSync(name, { force: true }); execFileSync('mkfifo', [name]); } catch (e) { console.log('fifo ' + name + ': ' + e.message); }
}
console.log('fifos made');
`;

export interface Hostile {
  /** GIT_BASE_URL: the repository is acme/hostile. */
  gitBaseUrl: string;
  /** A directory of the host the attacks aim at: the agent must never write or read it. */
  victimDir: string;
  /** Names in the victim directory other than the secret, and whether the secret changed. */
  victimHarm(): { created: string[]; secretChanged: boolean };
  /** Pushes a branch whose `name` is a link to `target` (a path known only once a test ran). */
  pushLink(branch: string, name: string, target: string): void;
  /** Pushes (again, replacing it) a branch of the app with `files` added, by relative path. */
  pushFiles(branch: string, files: Record<string, string>): void;
}

/** Makes <root>/git/acme/hostile.git with one branch per attack, and <root>/victim. */
export function hostileRepo(root: string): Hostile {
  const victimDir = join(root, 'victim');
  mkdirSync(victimDir, { recursive: true });
  const secret = join(victimDir, 'secret');
  writeFileSync(secret, VICTIM_SECRET, { mode: 0o600 });
  const gitRoot = join(root, 'git');
  const bare = join(gitRoot, 'acme', 'hostile.git');
  mkdirSync(join(gitRoot, 'acme'), { recursive: true });
  git(root, 'init', '-q', '--bare', bare);
  const branch = (name: string, files: (work: string) => void) => {
    const work = join(root, `hostile-${name}`);
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work);
    git(work, 'init', '-q');
    writeFileSync(
      join(work, 'package.json'),
      JSON.stringify({ name: 'hostile', private: true, scripts: { start: 'node server.js' } }),
    );
    writeFileSync(join(work, 'server.js'), APP);
    files(work);
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', name);
    git(work, 'push', '-q', '--force', bare, `HEAD:${name}`);
    rmSync(work, { recursive: true, force: true });
  };
  branch(ATTACKS.dockerfileLink, (w) =>
    symlinkSync(join(victimDir, 'written-through-dockerfile'), join(w, 'Dockerfile')),
  );
  branch(ATTACKS.procfileLink, (w) => symlinkSync(secret, join(w, 'Procfile')));
  branch(ATTACKS.packageLink, (w) => {
    rmSync(join(w, 'package.json'));
    symlinkSync('/dev/zero', join(w, 'package.json'));
    writeFileSync(join(w, 'Procfile'), 'web: node server.js\n');
  });
  branch(ATTACKS.markerLink, (w) => symlinkSync(secret, join(w, '.frameplane-built')));
  branch(ATTACKS.fifoMaker, (w) => writeFileSync(join(w, 'server.js'), FIFO_MAKER + APP));
  return {
    gitBaseUrl: `file://${gitRoot}`,
    victimDir,
    pushLink: (b, name, target) =>
      branch(b, (w) => {
        rmSync(join(w, name), { force: true });
        symlinkSync(target, join(w, name));
      }),
    pushFiles: (b, files) =>
      branch(b, (w) => {
        for (const [name, text] of Object.entries(files)) {
          mkdirSync(dirname(join(w, name)), { recursive: true });
          writeFileSync(join(w, name), text);
        }
      }),
    victimHarm: () => ({
      created: readdirSync(victimDir).filter((n) => n !== 'secret'),
      secretChanged: readFileSync(secret, 'utf8') !== VICTIM_SECRET,
    }),
  };
}
