// What a release changed against the one before it (issue 36): its commit range, the env keys
// added, changed and removed (with their values for those who may read them), and the settings
// it started with. A pure rule: the service reads both releases, this compares them.
import type { ReleaseSettings } from '../db/schema.ts';

/** What a release ran, as the comparison needs it. */
export interface ReleaseFacts {
  id: string;
  commit_sha: string | null;
  git_repository: string;
  git_repository_owner: string;
  git_repository_branch: string;
  env: Record<string, string>;
  settings: ReleaseSettings | null;
}

/** A key of the env; `from` and `to` only for callers who may read values. */
export interface EnvChange {
  key: string;
  from?: string;
  to?: string;
}

export interface ReleaseChanges {
  /** The release it is compared with: the newest one that served before it. */
  against: string;
  /** Null when both ran the same commit. */
  commits: { from: string | null; to: string | null } | null;
  env: { added: EnvChange[]; changed: EnvChange[]; removed: EnvChange[] };
  settings: Array<{ field: string; from: string | number | null; to: string | number | null }>;
}

/** The settings compared, as the API names them. */
const SETTINGS = [
  ['git_repository_name', (r: ReleaseFacts) => r.git_repository],
  ['git_repository_owner', (r: ReleaseFacts) => r.git_repository_owner],
  ['git_repository_branch', (r: ReleaseFacts) => r.git_repository_branch],
  ['port', (r: ReleaseFacts) => r.settings?.port ?? null],
  ['replica_count', (r: ReleaseFacts) => r.settings?.replica_count ?? null],
  ['health_check_path', (r: ReleaseFacts) => r.settings?.health_check_path ?? null],
] as const;

const byKey = (a: EnvChange, b: EnvChange) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function envChanges(
  before: Record<string, string>,
  after: Record<string, string>,
  values: boolean,
) {
  const has = (o: Record<string, string>, k: string) => Object.hasOwn(o, k);
  const out: ReleaseChanges['env'] = { added: [], changed: [], removed: [] };
  for (const [key, to] of Object.entries(after)) {
    if (!has(before, key)) out.added.push(values ? { key, to } : { key });
    else if (before[key] !== to)
      out.changed.push(values ? { key, from: before[key], to } : { key });
  }
  for (const [key, from] of Object.entries(before))
    if (!has(after, key)) out.removed.push(values ? { key, from } : { key });
  for (const list of Object.values(out)) list.sort(byKey);
  return out;
}

/**
 * `release` against `previous`; undefined without one to compare with (the first release, or
 * one whose predecessor history no longer holds). A setting either side did not record (made
 * before deployments recorded settings) is not compared.
 */
export function releaseChanges(
  previous: ReleaseFacts | undefined,
  release: ReleaseFacts,
  showValues: boolean,
): ReleaseChanges | undefined {
  if (!previous) return undefined;
  const settings: ReleaseChanges['settings'] = [];
  for (const [field, read] of SETTINGS) {
    const from = read(previous);
    const to = read(release);
    if (from !== null && to !== null && from !== to) settings.push({ field, from, to });
  }
  return {
    against: previous.id,
    commits:
      previous.commit_sha === release.commit_sha
        ? null
        : { from: previous.commit_sha, to: release.commit_sha },
    env: envChanges(previous.env, release.env, showValues),
    settings,
  };
}

/** The release before each deployment: the newest that succeeded with a smaller id. */
export function previousRelease<R extends { id: string; status: string }>(
  releases: readonly R[],
  deploymentId: string,
): R | undefined {
  let best: R | undefined;
  for (const r of releases)
    if (r.status === 'succeeded' && r.id < deploymentId && (!best || r.id > best.id)) best = r;
  return best;
}
