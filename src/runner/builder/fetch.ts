// Fetches a deployment's source with the git CLI: the branch's head (or the pushed commit) into
// a directory, and answers the commit it holds, so a deployment records exactly what it runs.
import { CommandFailed, firstLine, run } from './command.ts';
import { gitErrorLine, hidePlaces } from './git-said.ts';
import { BuildError, type FetchSpec } from '../runtimes/runtime.ts';

/** Where the git host keeps owner/repo: a URL (https://, file://…) or a plain directory. */
export function repositoryUrl(base: string, owner: string, repo: string): string {
  for (const name of [owner, repo]) {
    // The server allows [A-Za-z0-9._-]; dots alone would climb out of the base.
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(name) || /^\.+$/.test(name))
      throw new Error(`invalid repository name "${name}"`);
  }
  return `${base.replace(/\/+$/, '')}/${owner}/${repo.replace(/\.git$/, '')}.git`;
}

/** Not the agent's environment (it holds the agent token): only what git needs, and no prompts. */
export function gitEnv(): NodeJS.ProcessEnv {
  const pass = [
    'HOME',
    'PATH',
    'LANG',
    'TZ',
    'TMPDIR',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
    'HTTPS_PROXY',
    'https_proxy',
    'NO_PROXY',
  ];
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    pass.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]),
  );
  return { ...env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo' };
}

/** Clones the source into `into` (which must not exist) and answers the commit checked out. */
export async function fetchSource(o: {
  source: FetchSpec;
  into: string;
  cwd: string;
  onLine(l: string): void;
  signal?: AbortSignal;
}) {
  const { owner, repo, branch, commitSha } = o.source;
  const name = `${owner}/${repo}`;
  let url: string;
  try {
    url = repositoryUrl(o.source.gitBaseUrl, owner, repo);
  } catch (err) {
    throw new BuildError('clone_failed', `could not clone ${name}: ${(err as Error).message}`);
  }
  const hide = hidePlaces({
    url,
    base: o.source.gitBaseUrl,
    owner,
    repo,
    paths: [o.into, o.cwd],
  });
  const said: string[] = [];
  const common = {
    cwd: o.cwd,
    env: gitEnv(),
    onLine: (l: string) => {
      const shown = hide(l);
      said.push(shown);
      o.onLine(shown);
    },
    signal: o.signal,
    timeoutMs: 5 * 60_000,
  };
  let step = `clone ${name} (branch ${branch})`;
  try {
    await run(
      'git',
      // --no-local: from a plain directory, git would hardlink the host's object files into
      // the checkout, which is then handed to the tenant (process runtime).
      ['clone', '--quiet', '--no-local', '--depth', '1', '--branch', branch, '--', url, o.into],
      common,
    );
    if (commitSha) {
      step = `check out commit ${commitSha} of ${name} (branch ${branch})`;
      said.length = 0;
      await checkoutCommit(commitSha, { ...common, cwd: o.into });
    }
    const sha = await firstLine('git', ['rev-parse', 'HEAD'], { ...common, cwd: o.into });
    if (!/^[0-9a-f]{40,64}$/.test(sha)) throw new Error('git rev-parse HEAD gave no commit');
    return sha;
  } catch (err) {
    const why = (err instanceof CommandFailed && gitErrorLine(said)) || how(err);
    throw new BuildError('clone_failed', `could not ${step}: ${why}`);
  }
}

/** How git ended when it said nothing: never its command line, which names host paths. */
function how(err: unknown): string {
  if (err instanceof CommandFailed)
    return err.how === 'SIGKILL' ? 'git was stopped (time limit or cancelled)' : `git ${err.how}`;
  const code = (err as NodeJS.ErrnoException).code;
  return code ? `git could not run (${code})` : (err as Error).message;
}

/** The pushed commit, when the branch head has moved on since: fetched by id, else deepened. */
async function checkoutCommit(sha: string, common: Parameters<typeof run>[2]) {
  if (!/^[0-9a-f]{7,64}$/i.test(sha)) return; // not a commit id we can use: the branch head stands
  const head = await firstLine('git', ['rev-parse', 'HEAD'], common);
  if (head.startsWith(sha.toLowerCase())) return;
  try {
    await run('git', ['fetch', '--quiet', '--depth', '1', 'origin', sha], common);
  } catch {
    await run('git', ['fetch', '--quiet', '--unshallow', 'origin'], common);
  }
  await run('git', ['checkout', '--quiet', '--detach', sha], common);
}
