// What a failed clone tells the frame's owner: git's own error line, naming the repository
// rather than where it lives. The line is kept on the deployment and shown to every member of
// the project, so the agent's host paths (the checkout, a file:// git host) and credentials in
// GIT_BASE_URL never reach it; the fetch's log lines go through the same rewriting.
import { fileURLToPath } from 'node:url';

export interface Places {
  /** The repository's URL as the agent cloned it, and the git host it sits under. */
  url: string;
  base: string;
  owner: string;
  repo: string;
  /** Directories of the agent's host that git may name (the checkout, its parent). */
  paths: string[];
}

/** The ways git may spell a URL: as given, without its credentials, as a path, with a `/`. */
function spellings(url: string): string[] {
  const out = [url];
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    out.push(u.href);
    if (u.protocol === 'file:') out.push(fileURLToPath(u));
  } catch {
    // A plain directory: git names it as given.
  }
  return out.flatMap((s) => [s, `${s.replace(/\/+$/, '')}/`]);
}

/** A function that rewrites one line of git's output to name no place of the agent's host. */
export function hidePlaces(p: Places): (line: string) => string {
  const swaps: Array<[string, string]> = [
    ...spellings(p.url).map((s): [string, string] => [s, `${p.owner}/${p.repo}`]),
    ...spellings(p.base).map((s): [string, string] => [s, 'the git host']),
    ...p.paths.map((s): [string, string] => [s, 'the checkout']),
  ];
  // The longest first: a repository's URL begins with its host's.
  swaps.sort((a, b) => b[0].length - a[0].length);
  return (line) => {
    let out = line;
    for (const [from, to] of swaps) if (from.length > 1) out = out.split(from).join(to);
    return (
      out
        // Credentials in any other URL (a redirect, a submodule).
        .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]+@/gi, '$1')
        // Any other absolute path of the host.
        .replace(/(^|[\s'"(=])\/[^\s'"]+/g, '$1…')
    );
  };
}

/** git's own error line among what it said: its first `fatal:` (the cause; later ones are
 *  generic), else its first `error:`, else its last line. */
export function gitErrorLine(said: readonly string[]): string | undefined {
  const lines = said.map((l) => l.trim()).filter(Boolean);
  return (
    lines.find((l) => l.startsWith('fatal:')) ??
    lines.find((l) => l.startsWith('error:')) ??
    lines.at(-1)
  );
}
