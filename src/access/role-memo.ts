// Roles already computed, per (user, project), each with the versions it was read at
// (migrations/0004, 0015): a user's memberships of teams and orgs (and their roles) move
// `users.access_version`; a project's grants, its owner of either kind (owner_id, org_id) and
// the base_role of the org that owns it move `projects.access_version`; nothing else decides
// a role. A read of a remembered pair reads the two versions with its row, in one snapshot,
// instead of the role subquery; the role is reused only if both still hold (access-service
// withRole). So an entry can be old but never wrong, on any instance: it saves the role
// subquery, never the check.
import type { Role } from '../db/schema.ts';
import { MEMOS_ON, type Memos } from '../memo.ts';

const MAX_ENTRIES = 50_000;

export interface RoleHint {
  role: Role | null;
  userVersion: number;
  projectVersion: number;
}

/** What a read answers: the role and the versions, all of one snapshot. */
export interface RoleSeen {
  role: Role | null;
  caller_access_version: number;
  project_access_version: number;
}

export function createRoleMemo(memos: Memos = MEMOS_ON, maxEntries = MAX_ENTRIES) {
  // lru-cache, not a Map dropping its first key: see token-cache.ts.
  const entries = memos.lru<RoleHint>('roles', { max: maxEntries });
  const keyOf = (userId: string, projectId: string) => `${userId}\n${projectId}`;

  return {
    hint(userId: string, projectId: string): RoleHint | undefined {
      return entries.get(keyOf(userId, projectId));
    },
    /** Only what a read outside any transaction answered (see withRole). */
    remember(userId: string, projectId: string, seen: RoleSeen) {
      entries.set(keyOf(userId, projectId), {
        role: seen.role,
        userVersion: seen.caller_access_version,
        projectVersion: seen.project_access_version,
      });
    },
    get size() {
      return entries.size;
    },
  };
}

export type RoleMemo = ReturnType<typeof createRoleMemo>;
