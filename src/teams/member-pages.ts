// Pages of member lists, remembered per team version. Every change to a team's members (join,
// leave, role change, a member's new name or e-mail) bumps `teams.members_version` in the same
// transaction (triggers in migrations/0003). A request reads the version together with the
// caller's role, in the access check it makes anyway, and reuses a page only if it was read at
// that version: a cached page is never older than the caller's own view of the team, on any
// instance. A page of a large team costs a 50-row join and its JSON; a hit costs neither.
// A page not held at all is read with the access check, in one statement (members-service).
import type { Page } from '../paging.ts';

const MAX_PAGES = 500;

export function createMemberPages<T>() {
  // A Map keeps insertion order: re-inserting on a hit makes the first key the least recent.
  // One entry per page, at the newest version read.
  const pages = new Map<string, { version: number; page: Page<T> }>();
  const keyOf = (teamId: string, limit: number, cursor: string | undefined) =>
    `${teamId}\n${limit}\n${cursor ?? ''}`;

  return {
    /** Whether the page is held at any version: worth an access check of its own. */
    has(teamId: string, limit: number, cursor: string | undefined): boolean {
      return pages.has(keyOf(teamId, limit, cursor));
    },
    get(
      teamId: string,
      version: number,
      limit: number,
      cursor: string | undefined,
    ): Page<T> | undefined {
      const key = keyOf(teamId, limit, cursor);
      const entry = pages.get(key);
      if (entry?.version !== version) return undefined;
      pages.delete(key);
      pages.set(key, entry);
      return entry.page;
    },
    set(teamId: string, version: number, limit: number, cursor: string | undefined, page: Page<T>) {
      const key = keyOf(teamId, limit, cursor);
      // A slower read of an older version never replaces a newer page.
      if ((pages.get(key)?.version ?? -1) > version) return;
      pages.delete(key);
      if (pages.size >= MAX_PAGES) {
        const oldest = pages.keys().next();
        if (!oldest.done) pages.delete(oldest.value);
      }
      pages.set(key, { version, page });
    },
  };
}
