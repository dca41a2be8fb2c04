// link, unlink, and what a link does: a command that needs -p takes the linked project when -p
// is absent, and a command whose last argument is the frame (or the project) takes the linked
// one when it is left out. Both happen here, in one hook, for every command registered before
// `fallBackToLink` runs, so that no command file reads the link itself.
import type { Command } from 'commander';
import { context, type GlobalOptions, serverOf } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { findLink, type Link, LINK_FILE, removeLink, writeLink } from './link-file.ts';
import { details, note, printJson } from './output.ts';
import { frame, projectId } from './resolve.ts';

/** The link that applies here, refused when it names ids of another service than this one. */
function linkHere(cmd: Command): Link | undefined {
  const found = findLink();
  if (!found) return undefined;
  const server = serverOf(cmd.optsWithGlobals<GlobalOptions>());
  const linked = found.link.server.replace(/\/+$/, '');
  if (server && server !== linked)
    throw new CliError(
      `${found.path} links to a project on ${linked}, not on ${server}: ` +
        'name it with -p, or run `frameplane link` there again',
      EXIT.usage,
    );
  return found.link;
}

const LINK_HINT = 'or run `frameplane link <project>` in this directory';

/** What a command takes from the link: -p, and its last argument (`frame` or `project`). */
interface Takes {
  option: boolean;
  argument?: 'frame' | 'project';
}

function fill(cmd: Command, takes: Takes) {
  const last = cmd.registeredArguments.length - 1;
  const argumentMissing = takes.argument && cmd.processedArgs[last] === undefined;
  const optionMissing = takes.option && cmd.getOptionValue('project') === undefined;
  if (!argumentMissing && !optionMissing) return;
  const link = linkHere(cmd);
  if (optionMissing) {
    if (!link)
      cmd.error(`error: required option '-p, --project <project>' not specified (${LINK_HINT})`);
    cmd.setOptionValueWithSource('project', link.project.id, 'default');
  }
  if (!argumentMissing) return;
  const project: string | undefined = cmd.getOptionValue('project');
  // The linked frame belongs to the linked project: not to one named with -p.
  const sameProject =
    !takes.option || project === link?.project.id || project === link?.project.name;
  const value =
    takes.argument === 'project' ? link?.project.id : sameProject ? link?.frame?.id : undefined;
  if (value === undefined) {
    const hint = !link
      ? LINK_HINT
      : link.frame
        ? `the linked frame is in project ${link.project.name}`
        : 'or link one: `frameplane link --frame <frame>`';
    cmd.error(`error: missing required argument '${takes.argument}' (${hint})`);
  }
  cmd.processedArgs[last] = value;
}

/** Makes -p and a last <frame>/<project> optional wherever they are, and fills them in. */
export function fallBackToLink(program: Command) {
  const takers = new Map<Command, Takes>();
  const visit = (cmd: Command) => {
    const option = cmd.options.find((o) => o.attributeName() === 'project' && o.mandatory);
    option?.makeOptionMandatory(false);
    const last = cmd.registeredArguments.at(-1);
    const name = last?.name();
    const argument =
      last?.required && !last.variadic && (name === 'frame' || name === 'project')
        ? name
        : undefined;
    if (argument) last?.argOptional();
    if (option || argument) takers.set(cmd, { option: option !== undefined, argument });
    for (const sub of cmd.commands) visit(sub);
  };
  visit(program);
  program.hook('preAction', (_program, action) => {
    const takes = takers.get(action);
    if (takes) fill(action, takes);
  });
}

function showLink(json: boolean) {
  const found = findLink();
  if (!found)
    throw new CliError(`not linked: no ${LINK_FILE} here or above (${LINK_HINT})`, EXIT.notFound);
  const { path, link } = found;
  if (json) return printJson({ path, ...link });
  const named = (n?: { id: string; name: string }) => n && `${n.name} (${n.id})`;
  details({
    file: path,
    server: link.server,
    project: named(link.project),
    frame: named(link.frame),
  });
}

interface LinkOptions extends GlobalOptions {
  frame?: string;
  show?: boolean;
}

async function link(ref: string | undefined, opts: LinkOptions, cmd: Command) {
  if (opts.show) return showLink(opts.json === true);
  // `link --frame web` in a linked directory keeps its project.
  const projectRef = ref ?? linkHere(cmd)?.project.id;
  if (!projectRef) throw new CliError('name the project: frameplane link <project>', EXIT.usage);
  const ctx = context(cmd);
  const path = { project_id: await projectId(ctx.fp, projectRef) };
  const project = await ctx.fp.call(
    ctx.fp.api.GET('/v2/projects/{project_id}', { params: { path } }),
  );
  const f = opts.frame === undefined ? undefined : await frame(ctx.fp, project.id, opts.frame);
  const written: Link = {
    server: ctx.server,
    project: { id: project.id, name: project.name },
    ...(f && { frame: { id: f.id, name: f.name } }),
  };
  const file = writeLink(written);
  if (ctx.json) return printJson({ path: file, ...written });
  const what = f ? `project ${project.name}, frame ${f.name}` : `project ${project.name}`;
  note(`Linked ${file} to ${what}: commands here and below use it when -p is left out.`);
}

export function register(program: Command) {
  program
    .command('link [project]')
    .description('link this directory to a project (and a frame): -p and <frame> default to it')
    .option('--frame <frame>', 'the frame that commands taking a frame act on when none is named')
    .option('--show', 'show the link that applies here, and the file it is in')
    .action(async (ref: string | undefined, _opts, cmd: Command) =>
      link(ref, cmd.optsWithGlobals<LinkOptions>(), cmd),
    );
  program
    .command('unlink')
    .description('remove the link that applies here (the nearest .frameplane.json)')
    .action((_opts, cmd: Command) => {
      const found = findLink();
      if (!found) return note('Not linked.');
      removeLink(found.path);
      if (!cmd.optsWithGlobals<GlobalOptions>().json) note(`Removed ${found.path}.`);
    });
}
