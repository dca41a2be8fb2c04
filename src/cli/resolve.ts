// Names people type, turned into ids: a team by id or slug, a project by id or name, a frame by
// id or name within a project. An id is used as is; a name is looked up in the caller's lists.
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { CliError, EXIT } from './exit-codes.ts';

export async function teamId(fp: Frameplane, ref: string): Promise<string> {
  if (ref.startsWith('team_')) return ref;
  for await (const team of fp.pages((cursor) =>
    fp.api.GET('/v2/teams', { params: { query: { cursor, limit: 200 } } }),
  ))
    if (team.slug === ref) return team.id;
  throw new CliError(`no team "${ref}" among yours`, EXIT.notFound);
}

export async function projectId(fp: Frameplane, ref: string): Promise<string> {
  if (ref.startsWith('prj_')) return ref;
  const found: string[] = [];
  for await (const p of fp.pages((cursor) =>
    fp.api.GET('/v2/projects', { params: { query: { cursor, limit: 200 } } }),
  ))
    if (p.name === ref) found.push(p.id);
  if (found.length === 1) return found[0] as string;
  if (found.length > 1)
    throw new CliError(`${found.length} projects are named "${ref}": use an id`, EXIT.usage);
  throw new CliError(`no project "${ref}" among yours`, EXIT.notFound);
}

export async function frame(
  fp: Frameplane,
  projectRef: string,
  ref: string,
): Promise<Schemas['Frame']> {
  const project_id = await projectId(fp, projectRef);
  const found: Schemas['Frame'][] = [];
  for await (const f of fp.pages((cursor) =>
    fp.api.GET('/v2/projects/{project_id}/frames', {
      params: { path: { project_id }, query: { cursor, limit: 200 } },
    }),
  ))
    if (f.id === ref || f.name === ref) found.push(f);
  if (found.length === 1) return found[0] as Schemas['Frame'];
  if (found.length > 1)
    throw new CliError(`${found.length} frames are named "${ref}": use an id`, EXIT.usage);
  throw new CliError(`no frame "${ref}" in project ${project_id}`, EXIT.notFound);
}

/** The token of an invitation link (https://…/invitations/<token>), or the token itself. */
export function invitationToken(linkOrToken: string): string {
  const m = /\/invitations\/([^/?#\s]+)/.exec(linkOrToken);
  return m?.[1] ? decodeURIComponent(m[1]) : linkOrToken.trim();
}
