// The agent's clone (src/runner/builder/fetch.ts) against real git: a repository or a branch
// that does not exist, a commit the repository lacks and a git host that does not answer each
// fail with clone_failed and a message that names the repository, the branch and git's own
// error line, and never a path of the agent's host or the credentials of GIT_BASE_URL (the
// message is kept on the deployment and shown to the project's members).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchSource } from '../../src/runner/builder/fetch.ts';
import { BuildError, type FetchSpec } from '../../src/runner/runtimes/runtime.ts';
import { gitFixture } from './fixture.ts';

let tmp: string;
let repo: ReturnType<typeof gitFixture>;
let head: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'frameplane-fetch-'));
  repo = gitFixture(tmp);
  head = repo.pushApp('v1');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
async function clone(over: Partial<FetchSpec>) {
  const lines: string[] = [];
  const source: FetchSpec = {
    gitBaseUrl: repo.gitBaseUrl,
    owner: 'acme',
    repo: 'app',
    branch: 'main',
    commitSha: null,
    ...over,
  };
  const into = join(tmp, `checkout-${n++}`);
  const got = await fetchSource({ source, into, cwd: tmp, onLine: (l) => lines.push(l) }).then(
    (sha) => ({ sha }),
    (err: unknown) => ({ err }),
  );
  return { ...got, lines };
}

/** The failure as the owner sees it: clone_failed, and no trace of where things are on the host. */
function failure(got: { err?: unknown; lines: string[] }) {
  expect(got.err).toBeInstanceOf(BuildError);
  const err = got.err as BuildError;
  expect(err.reason).toBe('clone_failed');
  for (const said of [err.message, ...got.lines]) {
    expect(said).not.toContain(tmp);
    expect(said).not.toMatch(/s3cret|file:\/\//);
  }
  return err.message;
}

describe('fetchSource', () => {
  it('clones the branch and answers its commit', async () => {
    expect(await clone({})).toMatchObject({ sha: head });
  });

  it('a repository that does not exist: clone_failed, naming it and the branch', async () => {
    const message = failure(await clone({ repo: 'missing' }));
    expect(message).toBe(
      "could not clone acme/missing (branch main): fatal: 'acme/missing' does not appear to be " +
        'a git repository',
    );
  });

  it("a branch that does not exist: clone_failed with git's line", async () => {
    const message = failure(await clone({ branch: 'no-such-branch' }));
    expect(message).toBe(
      'could not clone acme/app (branch no-such-branch): ' +
        'fatal: Remote branch no-such-branch not found in upstream origin',
    );
  });

  it('a pushed commit the repository lacks: clone_failed, naming the commit', async () => {
    const missing = 'f'.repeat(40);
    const message = failure(await clone({ commitSha: missing }));
    expect(message).toMatch(
      new RegExp(
        `^could not check out commit ${missing} of acme/app \\(branch main\\): ` +
          `fatal: .*(not our ref|not a tree).*${missing}`,
      ),
    );
  });

  it('a git host that does not answer: its credentials stay out of the message', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((done) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => done(p));
      });
    });
    const message = failure(await clone({ gitBaseUrl: `http://ann:s3cret@127.0.0.1:${port}` }));
    expect(message).toMatch(
      /^could not clone acme\/app \(branch main\): fatal: unable to access 'acme\/app': .*connect/i,
    );
  });

  it('a repository name that climbs out of the git host: refused before git runs', async () => {
    const message = failure(await clone({ repo: '..' }));
    expect(message).toBe('could not clone acme/..: invalid repository name ".."');
  });
});
