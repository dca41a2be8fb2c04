// Pages of member lists, remembered per team version. Every change to a team's members (join,
// leave, role change, a member's new name or e-mail) bumps `teams.members_version` in the same
// transaction (triggers in migrations/0003). A request reads the version together with the
// caller's role, in the access check it makes anyway, and reuses a page only if it was read at
// that version: a cached page is never older than the caller's own view of the team, on any
// instance. A page of a large team costs a 50-row join and its JSON; a hit costs neither.
import type { Page } from '../paging.ts';

const MAX_PAGES = 500;

export function createMemberPages<T>() {
  // A Map keeps insertion order: re-inserting on a hit makes the first key the least recent.
  const pages = new Map<string, Page<T>>();
  const keyOf = (teamId: string, version: number, limit: number, cursor: string | undefined) =>
    `${teamId}\n${version}\n${limit}\n${cursor ?? ''}`;

  return {
    get(
      teamId: string,
      version: number,
      limit: number,
      cursor: string | undefined,
    ): Page<T> | undefined {
      const key = keyOf(teamId, version, limit, cursor);
      const page = pages.get(key);
      if (page) {
        pages.delete(key);
        pages.set(key, page);
      }
      return page;
    },
    set(teamId: string, version: number, limit: number, cursor: string | undefined, page: Page<T>) {
      if (pages.size >= MAX_PAGES) {
        const oldest = pages.keys().next();
        if (!oldest.done) pages.delete(oldest.value);
      }
      pages.set(keyOf(teamId, version, limit, cursor), page);
    },
  };
}
