// Changes of who reaches a project, heard when they commit, on every instance. The database
// NOTIFYs `frameplane_access` whenever a user's or a project's access version moves (role-memo.ts
// says what moves them) and when a project is deleted (migrations/0022), so no path that
// changes access has to remember to. A notification says only that something changed: the one
// check (access-service requireProject) decides what it means.
import type { Notifier } from '../db/notifier.ts';

/**
 * Calls `fn` whenever `userId`'s access to `projectId` may have changed. Returns the
 * unsubscriber. After a gap in the LISTEN connection the notifier calls it once too.
 */
export function onAccessChange(
  notifier: Notifier,
  userId: string,
  projectId: string,
  fn: () => void,
): () => void {
  const offs = [
    notifier.subscribe('frameplane_access', `user:${userId}`, fn),
    notifier.subscribe('frameplane_access', `project:${projectId}`, fn),
  ];
  return () => {
    for (const off of offs) off();
  };
}
