// frames previews list/set: a frame's preview frames, made by pushes to other branches and by
// pull requests (issue 36), and whether it makes them.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { urlCell } from './address.ts';
import { context, group, projectOption } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { pathOf, showFrame } from './frames.ts';
import { table } from './output.ts';
import { frame as findFrame } from './resolve.ts';

const previewsPath = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/previews';
const previewRow = (f: Schemas['Frame']) => ({
  id: f.id,
  branch: f.preview?.branch,
  'pull request': f.preview?.pull_request ?? undefined,
  status: f.status,
  url: urlCell(f),
  expires: f.preview?.expires_at,
});

interface SetOptions {
  project: string;
  on?: boolean;
  off?: boolean;
  ttlDays?: string;
  env?: string[];
}

export function register(program: Command) {
  const previews = group(program, 'frames')
    .command('previews')
    .description("a frame's previews: frames of other branches and pull requests");
  previews
    .command('list <frame>')
    .description("the frame's previews, with their branch and address")
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = pathOf(await findFrame(fp, opts.project, ref));
      const all = await fp.all((cursor) =>
        fp.api.GET(previewsPath, { params: { path, query: { cursor } } }),
      );
      show(all, (list) =>
        table(list.map(previewRow), ['id', 'branch', 'pull request', 'status', 'url', 'expires']),
      );
    });
  previews
    .command('set <frame>')
    .description('whether the frame makes previews, for how long, with what env on top')
    .requiredOption(...projectOption)
    .option('--on', 'make previews of pushes to other branches and of pull requests')
    .option('--off', 'make no more (those made expire)')
    .option('--ttl-days <n>', 'remove a preview after this many days without a push (1..90)')
    .option('--env <NAME=value...>', "replace the env previews get on top of the frame's")
    .action(async (ref: string, opts: SetOptions, cmd: Command) => {
      if (opts.on && opts.off) throw new CliError('--on or --off, not both', EXIT.usage);
      const body: NonNullable<Schemas['UpdateFrameBody']['previews']> = {};
      if (opts.on || opts.off) body.enabled = opts.on === true;
      if (opts.ttlDays !== undefined) body.ttl_days = Number(opts.ttlDays);
      if (opts.env) body.env = Object.fromEntries(opts.env.map(pair));
      if (Object.keys(body).length === 0) throw new CliError('nothing to change', EXIT.usage);
      const ctx = context(cmd);
      const f = await findFrame(ctx.fp, opts.project, ref);
      showFrame(ctx, (await ctx.fp.updateFrame(f, { previews: body })).frame);
    });
}

function pair(text: string): [string, string] {
  const at = text.indexOf('=');
  if (at < 1) throw new CliError(`"${text}" is not NAME=value`, EXIT.usage);
  return [text.slice(0, at), text.slice(at + 1)];
}
