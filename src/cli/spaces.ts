// spaces list/create/show/rename/delete: the spaces of a project (--project, by id or name).
// A space is named by id or name; names are unique within a project.
import type { Command } from 'commander';
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { context, projectOption } from './context.ts';
import { details, note, table } from './output.ts';
import { projectId, spaceId } from './resolve.ts';

const spaceRow = (s: Schemas['Space']) => ({ id: s.id, name: s.name, created: s.created_at });

/** The path of a space named on the command line. */
async function spacePath(fp: Frameplane, projectRef: string, ref: string) {
  const project_id = await projectId(fp, projectRef);
  return { project_id, space_id: await spaceId(fp, project_id, ref, projectRef) };
}

export function register(program: Command) {
  const spaces = program.command('spaces').description("a project's spaces (groups of frames)");
  spaces
    .command('list')
    .description("a project's spaces")
    .requiredOption(...projectOption)
    .action(async (opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { project_id: await projectId(fp, opts.project) };
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/projects/{project_id}/spaces', { params: { path, query: { cursor } } }),
      );
      show(all, (list) => table(list.map(spaceRow), ['id', 'name', 'created']));
    });
  spaces
    .command('create <name>')
    .description('create a space (project admin)')
    .requiredOption(...projectOption)
    .action(async (name: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { project_id: await projectId(fp, opts.project) };
      const space = await fp.call(
        fp.api.POST('/v2/projects/{project_id}/spaces', { params: { path }, body: { name } }),
      );
      show(space, (s) => details(spaceRow(s)));
    });
  spaces
    .command('show <space>')
    .description('one space (by id or name)')
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = await spacePath(fp, opts.project, ref);
      const space = await fp.call(
        fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}', { params: { path } }),
      );
      show(space, (s) => details(spaceRow(s)));
    });
  spaces
    .command('rename <space> <name>')
    .description('give a space a new name (project admin)')
    .requiredOption(...projectOption)
    .action(async (ref: string, name: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = await spacePath(fp, opts.project, ref);
      const space = await fp.call(
        fp.api.PATCH('/v2/projects/{project_id}/spaces/{space_id}', {
          params: { path },
          body: { name },
        }),
      );
      show(space, (s) => details(spaceRow(s)));
    });
  spaces
    .command('delete <space>')
    .description('delete an empty space (project admin; delete its frames first)')
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, json } = context(cmd);
      const path = await spacePath(fp, opts.project, ref);
      await fp.call(
        fp.api.DELETE('/v2/projects/{project_id}/spaces/{space_id}', { params: { path } }),
      );
      if (!json) note(`Deleted space ${ref}.`);
    });
}
