// Names for people, ids for scripts: a human line names the teams, projects and people it
// refers to; their ids show with -v (and in --json, which prints the API's answer as it is).
import type { Frameplane, Schemas } from '../sdk/index.ts';
import type { Context } from './context.ts';
import { pick } from './resolve.ts';

/** "Web Team", or "Web Team (team_…)" with -v; the id alone when the name is not known. */
export const named = (ctx: Pick<Context, 'verbose'>, name: string | undefined, id: string) =>
  name === undefined ? id : ctx.verbose ? `${name} (${id})` : name;

/** A person as people know them: "Ann <ann@example.com>". */
export const person = (p: { name: string; email: string }) =>
  p.name ? `${p.name} <${p.email}>` : p.email;

/** The caller's projects by id: one list read names them all (grants, owners…). */
export async function projectNames(fp: Frameplane): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const all = fp.pages((cursor) =>
    fp.api.GET('/v2/projects', { params: { query: { cursor, limit: 200 } } }),
  );
  for await (const p of all) names.set(p.id, p.name);
  return names;
}

/** A team by id or slug, with its name. */
export function teamOf(fp: Frameplane, ref: string): Promise<Schemas['Team']> {
  if (ref.startsWith('team_'))
    return fp.call(fp.api.GET('/v2/teams/{team_id}', { params: { path: { team_id: ref } } }));
  const teams = fp.pages((cursor) =>
    fp.api.GET('/v2/teams', { params: { query: { cursor, limit: 200 } } }),
  );
  return pick(teams, (t) => t.slug, ref, 'team', 'among yours');
}

/** A project by id or name, with its name. */
export function projectOf(fp: Frameplane, ref: string): Promise<Schemas['Project']> {
  if (ref.startsWith('prj_'))
    return fp.call(
      fp.api.GET('/v2/projects/{project_id}', { params: { path: { project_id: ref } } }),
    );
  const projects = fp.pages((cursor) =>
    fp.api.GET('/v2/projects', { params: { query: { cursor, limit: 200 } } }),
  );
  return pick(projects, (p) => p.name, ref, 'project', 'among yours');
}

/** Who owns a project, in words: a person, or an organization (and its owner). */
export async function ownerText(ctx: Context, p: Schemas['Project']): Promise<string> {
  const path = { project_id: p.id };
  const access = await ctx.fp.call(
    ctx.fp.api.GET('/v2/projects/{project_id}/access', { params: { path } }),
  );
  if (p.owner_kind === 'org' && access.org)
    return `org ${named(ctx, access.org.name, access.org.id)}`;
  return named(ctx, person(access.owner), access.owner.user_id);
}
