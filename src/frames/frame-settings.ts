// What a frame is created with and what a PATCH may change, and the rules on them that need no
// database: the health check path, the If-Match precondition, what an update changes.
import { AppError, fieldError } from '../errors.ts';
import type { FrameSettings } from './frames-dal.ts';

export interface FrameInput {
  name: string;
  owner_id: string;
  git_repository: string;
  git_repository_owner: string;
  git_repository_branch: string;
  port: number;
  replica_count?: number;
  agent_id?: string;
  health_check_path?: string;
}
export interface FrameUpdate {
  name?: string;
  git_repository_name?: string;
  git_repository_owner?: string;
  git_repository_branch?: string;
  port?: number;
  replica_count?: number;
  health_check_path?: string;
  push_deploys?: { enabled: boolean };
  previews?: { enabled?: boolean; ttl_days?: number; env?: Record<string, string> };
}

/** What is wrong with a health check path, if anything (the rule of frames.health_check_path's CHECK). */
export function healthCheckPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'must start with "/"';
  if ([...path].length > 200) return 'must be at most 200 characters';
  if (/[\s\p{Cc}]/u.test(path))
    return 'must not contain whitespace or control characters (percent-encode them)';
  return undefined;
}

export function checkHealthCheckPath(path: string | undefined) {
  const problem = path === undefined ? undefined : healthCheckPathProblem(path);
  if (problem) {
    throw fieldError(
      'health_check_path',
      'invalid_health_check_path',
      `health_check_path ${problem}: send the path the agent should probe, such as "/healthz".`,
    );
  }
}

/** Refuses the change when If-Match names none of the frame's current ETag (`*` matches any). */
export function checkIfMatch(ifMatch: string | undefined, etag: string) {
  if (!ifMatch || ifMatch === '*') return;
  const tags = ifMatch.split(',').map((s) => s.trim().replace(/^W\//, ''));
  if (tags.includes(etag)) return;
  throw new AppError(
    412,
    'precondition_failed',
    'Precondition failed',
    'The frame changed since you read it; read it again and retry.',
  );
}

/** The update under column names (the API's git_repository_name is the git_repository column). */
export function settingsOf(input: FrameUpdate): FrameSettings {
  const { git_repository_name, push_deploys: _, previews: __, ...rest } = input;
  return {
    ...rest,
    ...(git_repository_name !== undefined ? { git_repository: git_repository_name } : {}),
  };
}

/** The fields of the update whose value differs from the frame's, as the API names them. */
export function changedFields(before: Record<string, unknown>, input: FrameUpdate) {
  const { push_deploys, previews, ...rest } = input;
  const changed: Record<string, unknown> = Object.fromEntries(
    Object.entries(rest).filter(
      ([k, v]) => before[k === 'git_repository_name' ? 'git_repository' : k] !== v,
    ),
  );
  const enabled = before.push_deploys_paused_at === null;
  if (push_deploys && push_deploys.enabled !== enabled) changed.push_deploys = push_deploys;
  if (previews) changed.previews = withoutValues(previews);
  return changed;
}

/** The update as events and the audit log show it: preview env by names, never values. */
export function shownUpdate(input: FrameUpdate): Record<string, unknown> {
  return input.previews ? { ...input, previews: withoutValues(input.previews) } : { ...input };
}
function withoutValues(p: NonNullable<FrameUpdate['previews']>) {
  return p.env ? { ...p, env: Object.keys(p.env).sort() } : p;
}

/** The preview columns a PATCH's `previews` sets (the overrides sealed by `seal`). */
export function previewsOf(input: FrameUpdate, seal: (json: string) => string) {
  const p = input.previews;
  if (!p) return {};
  const env = p.env
    ? {
        previews_env_sealed: Object.keys(p.env).length ? seal(JSON.stringify(p.env)) : null,
        previews_env_keys: Object.keys(p.env).sort(),
      }
    : {};
  return {
    ...(p.enabled !== undefined ? { previews_enabled: p.enabled } : {}),
    ...(p.ttl_days !== undefined ? { previews_ttl_days: p.ttl_days } : {}),
    ...env,
  };
}

/** The push-deploy columns a PATCH's `push_deploys` sets; none when it changes nothing. */
export function pushDeploysOf(input: FrameUpdate, pausedAt: Date | null, at: Date) {
  const enabled = input.push_deploys?.enabled;
  if (enabled === undefined || enabled === (pausedAt === null)) return {};
  return enabled
    ? { push_deploys_paused_at: null, push_deploys_paused_by: null }
    : { push_deploys_paused_at: at, push_deploys_paused_by: null };
}

/** The settings an audit entry shows as `before`. */
export function settingsBefore(f: Required<FrameSettings>): Required<FrameSettings> {
  return {
    name: f.name,
    port: f.port,
    replica_count: f.replica_count,
    health_check_path: f.health_check_path,
    git_repository: f.git_repository,
    git_repository_owner: f.git_repository_owner,
    git_repository_branch: f.git_repository_branch,
  };
}
