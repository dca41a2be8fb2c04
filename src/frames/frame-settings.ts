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
  const { git_repository_name, ...rest } = input;
  return {
    ...rest,
    ...(git_repository_name !== undefined ? { git_repository: git_repository_name } : {}),
  };
}

/** The fields of the update whose value differs from the frame's, as the API names them. */
export function changedFields(before: Record<string, unknown>, input: FrameUpdate) {
  return Object.fromEntries(
    Object.entries(input).filter(
      ([k, v]) => before[k === 'git_repository_name' ? 'git_repository' : k] !== v,
    ),
  );
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
