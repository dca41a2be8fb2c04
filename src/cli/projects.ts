// projects create/list/show, share/unshare/grants, access.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { named, ownerText, projectNames, projectOf, teamOf } from './names.ts';
import { details, note, printJson, table } from './output.ts';
import { projectId, teamId } from './resolve.ts';

type Via = Schemas['ProjectAccess']['members'][number]['via'][number];

/** "team web-team (member, grant viewer)": one path to a person's access, in words. */
function viaText(v: Via, teams: Map<string, string>): string {
  if (v.kind === 'owner') return 'owner';
  if (v.kind === 'org') return `org (${v.org_role ?? v.base_role})`;
  const team = (v.team_id && teams.get(v.team_id)) || v.team_id;
  return `team ${team} (${v.team_role}, grant ${v.grant_role})`;
}

const projectRow = (p: Schemas['Project']) => ({ id: p.id, name: p.name, role: p.role });

export function register(program: Command) {
  const projects = program.command('projects').description('projects you own or share');
  projects
    .command('create <name>')
    .description('create a project (with its default space)')
    .action(async (name: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const project = await fp.call(fp.api.POST('/v2/projects', { body: { name } }));
      show(project, (p) => details(projectRow(p)));
    });
  projects
    .command('list')
    .description('your projects, owned and shared, with your role in each')
    .action(async (_opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/projects', { params: { query: { cursor } } }),
      );
      show(all, (list) => table(list.map(projectRow), ['id', 'name', 'role']));
    });
  projects
    .command('show <project>')
    .description('one project (by id or name)')
    .action(async (ref: string, _opts, cmd: Command) => {
      const ctx = context(cmd);
      const path = { project_id: await projectId(ctx.fp, ref) };
      const project = await ctx.fp.call(
        ctx.fp.api.GET('/v2/projects/{project_id}', { params: { path } }),
      );
      if (ctx.json) return printJson(project);
      details({
        ...projectRow(project),
        owner: await ownerText(ctx, project),
        created: project.created_at,
      });
    });

  program
    .command('share <project>')
    .description("give a team's members a role on a project")
    .requiredOption('--team <team>', 'the team (id or slug)')
    .option('--role <role>', 'viewer, member or admin', 'viewer')
    .action(async (ref: string, opts: { team: string; role: string }, cmd: Command) => {
      const ctx = context(cmd);
      const { fp } = ctx;
      const project = await projectOf(fp, ref);
      const team = await teamOf(fp, opts.team);
      const role = opts.role as Schemas['CreateGrantBody']['role'];
      const grant = await fp.call(
        fp.api.POST('/v2/teams/{team_id}/grants', {
          params: { path: { team_id: team.id } },
          body: { project_id: project.id, role },
        }),
      );
      ctx.show(grant, (g) =>
        details({
          project: named(ctx, project.name, g.project_id),
          team: named(ctx, team.name, g.team_id),
          role: g.role,
          ...(ctx.verbose ? { grant: g.id } : {}),
        }),
      );
    });
  program
    .command('unshare <project>')
    .description("take back a team's grant on a project")
    .requiredOption('--team <team>', 'the team (id or slug)')
    .action(async (ref: string, opts: { team: string }, cmd: Command) => {
      const { fp, json } = context(cmd);
      const project_id = await projectId(fp, ref);
      const team_id = await teamId(fp, opts.team);
      const grants = await fp.all((cursor) =>
        fp.api.GET('/v2/teams/{team_id}/grants', {
          params: { path: { team_id }, query: { cursor } },
        }),
      );
      const grant = grants.find((g) => g.project_id === project_id);
      if (!grant) throw new CliError(`team ${opts.team} has no grant on ${ref}`, EXIT.notFound);
      await fp.call(
        fp.api.DELETE('/v2/teams/{team_id}/grants/{grant_id}', {
          params: { path: { team_id, grant_id: grant.id } },
        }),
      );
      if (!json) note(`Team ${opts.team} no longer has access to ${ref}.`);
    });
  program
    .command('grants <team>')
    .description('the projects a team (id or slug) is given, and with which role')
    .action(async (ref: string, _opts, cmd: Command) => {
      const ctx = context(cmd);
      const { fp } = ctx;
      const path = { team_id: await teamId(fp, ref) };
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/teams/{team_id}/grants', { params: { path, query: { cursor } } }),
      );
      if (ctx.json) return printJson(all);
      const names = await projectNames(fp);
      const rows = all.map((g) => ({
        project: named(ctx, names.get(g.project_id), g.project_id),
        role: g.role,
        grant: g.id,
      }));
      table(rows, ctx.verbose ? ['project', 'role', 'grant'] : ['project', 'role']);
    });

  program
    .command('access <project>')
    .description('who has access to a project, and why')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { project_id: await projectId(fp, ref) };
      const access = await fp.call(
        fp.api.GET('/v2/projects/{project_id}/access', { params: { path } }),
      );
      show(access, (a) => {
        const teams = new Map(a.grants.map((g) => [g.team.id, g.team.slug]));
        table(
          a.members.map((m) => ({
            email: m.email,
            name: m.name,
            role: m.role,
            via: m.via.map((v) => viaText(v, teams)).join('; '),
          })),
          ['email', 'name', 'role', 'via'],
        );
      });
    });
}
