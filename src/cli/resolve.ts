// Names people type, turned into ids: a team or org by id or slug, a project by id or name, a
// space or frame by id or name within a project, a member by user id or e-mail, a domain by id
// or hostname, a volume by id or name. An id is used as is; a name is looked up in the lists.
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { CliError, EXIT } from './exit-codes.ts';

/**
 * The one item of `items` whose `key` is `ref` (or whose id is), read page by page. A name that
 * matches several is refused (exit 2) rather than guessed; none is "not found" (exit 4).
 */
export async function pick<T extends { id: string }>(
  items: AsyncIterable<T>,
  key: (item: T) => string,
  ref: string,
  noun: string,
  where: string,
): Promise<T> {
  const found: T[] = [];
  for await (const item of items) if (item.id === ref || key(item) === ref) found.push(item);
  if (found.length === 1) return found[0] as T;
  if (found.length > 1)
    throw new CliError(`${found.length} ${noun}s are named "${ref}": use an id`, EXIT.usage);
  throw new CliError(`no ${noun} "${ref}" ${where}`, EXIT.notFound);
}

export async function teamId(fp: Frameplane, ref: string): Promise<string> {
  if (ref.startsWith('team_')) return ref;
  const teams = fp.pages((cursor) =>
    fp.api.GET('/v2/teams', { params: { query: { cursor, limit: 200 } } }),
  );
  return (await pick(teams, (t) => t.slug, ref, 'team', 'among yours')).id;
}

export async function orgId(fp: Frameplane, ref: string): Promise<string> {
  if (ref.startsWith('org_')) return ref;
  const orgs = fp.pages((cursor) =>
    fp.api.GET('/v2/orgs', { params: { query: { cursor, limit: 200 } } }),
  );
  return (await pick(orgs, (o) => o.slug, ref, 'org', 'among yours')).id;
}

export async function projectId(fp: Frameplane, ref: string): Promise<string> {
  if (ref.startsWith('prj_')) return ref;
  const projects = fp.pages((cursor) =>
    fp.api.GET('/v2/projects', { params: { query: { cursor, limit: 200 } } }),
  );
  return (await pick(projects, (p) => p.name, ref, 'project', 'among yours')).id;
}

/** `projectRef`: the project as the user named it, for the message when there is no such space. */
export async function spaceId(
  fp: Frameplane,
  project_id: string,
  ref: string,
  projectRef = project_id,
): Promise<string> {
  if (ref.startsWith('spc_')) return ref;
  const spaces = fp.pages((cursor) =>
    fp.api.GET('/v2/projects/{project_id}/spaces', {
      params: { path: { project_id }, query: { cursor, limit: 200 } },
    }),
  );
  return (await pick(spaces, (s) => s.name, ref, 'space', `in project ${projectRef}`)).id;
}

export async function frame(
  fp: Frameplane,
  projectRef: string,
  ref: string,
): Promise<Schemas['Frame']> {
  const project_id = await projectId(fp, projectRef);
  const frames = fp.pages((cursor) =>
    fp.api.GET('/v2/projects/{project_id}/frames', {
      params: { path: { project_id }, query: { cursor, limit: 200 } },
    }),
  );
  return pick(frames, (f) => f.name, ref, 'frame', `in project ${projectRef}`);
}

/** A member (of a team or an org) by user id or e-mail, among `members`. */
export async function memberId(
  members: AsyncIterable<{ user_id: string; email: string }>,
  ref: string,
): Promise<string> {
  if (ref.startsWith('usr_')) return ref;
  for await (const m of members) if (m.email.toLowerCase() === ref.toLowerCase()) return m.user_id;
  throw new CliError(`no member "${ref}"`, EXIT.notFound);
}

/** The token of an invitation link (https://…/invitations/<token>), or the token itself. */
export function invitationToken(linkOrToken: string): string {
  const m = /\/invitations\/([^/?#\s]+)/.exec(linkOrToken);
  return m?.[1] ? decodeURIComponent(m[1]) : linkOrToken.trim();
}
