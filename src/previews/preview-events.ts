// What a git host's delivery asks of frames (issue 36), as a pure rule: a push deploys the frames
// watching its branch and makes or updates previews of the others; a deleted branch, or a
// closed pull request, removes that branch's previews; an opened or updated pull request
// makes or updates a preview of the frames watching its base branch. A pull request from a
// fork is not previewed: its branch is not in the repository the agents fetch, and its code
// is a stranger's.

export interface HookBody {
  ref?: string;
  after?: string;
  deleted?: boolean;
  action?: string;
  number?: number;
  pull_request?: {
    head?: { ref?: string; sha?: string; repo?: { full_name?: string } | null };
    base?: { ref?: string; repo?: { full_name?: string } | null };
  };
}

export type HookEvent =
  | { kind: 'push'; branch: string; commit: string | null }
  | { kind: 'branch_deleted'; branch: string }
  | { kind: 'pull_request'; number: number; branch: string; base: string; commit: string | null }
  | { kind: 'pull_request_closed'; number: number; branch: string };

const COMMIT = /^[0-9a-f]{7,64}$/i;
const commitOf = (v: unknown) => (typeof v === 'string' && COMMIT.test(v) ? v : null);
const OPENED = new Set(['opened', 'reopened', 'synchronize']);

function pullRequest(body: HookBody): HookEvent | undefined {
  const pr = body.pull_request;
  const branch = pr?.head?.ref;
  const base = pr?.base?.ref;
  const number = body.number;
  if (!branch || !base || !Number.isInteger(number) || number === undefined) return undefined;
  const from = pr?.head?.repo?.full_name;
  if (!from || from.toLowerCase() !== pr?.base?.repo?.full_name?.toLowerCase()) return undefined;
  if (body.action === 'closed') return { kind: 'pull_request_closed', number, branch };
  if (OPENED.has(body.action ?? ''))
    return { kind: 'pull_request', number, branch, base, commit: commitOf(pr?.head?.sha) };
  return undefined;
}

/** The delivery's meaning, or undefined when it asks nothing (a ping, a tag, an edit). */
export function hookEventOf(event: string | undefined, body: HookBody): HookEvent | undefined {
  if (event === 'pull_request') return pullRequest(body);
  if (event !== undefined && event !== 'push') return undefined;
  const branch = body.ref?.startsWith('refs/heads/')
    ? body.ref.slice('refs/heads/'.length)
    : undefined;
  if (!branch) return undefined;
  if (body.deleted) return { kind: 'branch_deleted', branch };
  return { kind: 'push', branch, commit: commitOf(body.after) };
}

/** A preview's name: its parent's and its branch's, within a frame name's 100 characters. */
export function previewName(parent: string, branch: string): string {
  return `${parent}-${branch}`.slice(0, 100);
}

/** When a preview pushed at `pushedAt` expires, `ttlDays` days without a push later. */
export function previewExpiry(pushedAt: Date, ttlDays: number): Date {
  return new Date(pushedAt.getTime() + ttlDays * 86400_000);
}
