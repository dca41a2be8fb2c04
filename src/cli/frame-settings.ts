// frames update/scale/delete and env list/set/unset: a frame's settings.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context, group, projectOption } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { pathOf, showFrame } from './frames.ts';
import { details, note, paint, table } from './output.ts';
import { frame as findFrame } from './resolve.ts';

function count(raw: string, name: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${name} must be a whole number`, 2);
  return n;
}

interface EnvOptions {
  project: string;
  deploy?: boolean;
}

interface UpdateOptions {
  project: string;
  name?: string;
  branch?: string;
  port?: string;
  healthCheckPath?: string;
  ifMatch?: string;
  deploy?: boolean;
}

export function register(program: Command) {
  const frames = group(program, 'frames');
  frames
    .command('update <frame>')
    .description("change a frame's settings (a port change re-rolls a running frame)")
    .requiredOption(...projectOption)
    .option('--name <name>', 'a new name')
    .option('--branch <branch>', 'deploy this branch from now on')
    .option('--port <port>', 'the port the app listens on inside its container (its PORT)')
    .option('--health-check-path <path>', 'what the agent probes')
    .option('--if-match <etag>', 'only if the frame is still this version (its ETag)')
    .option(
      '--deploy',
      'apply it at once as a release (of the serving build, unless the branch changed)',
    )
    .action(async (ref: string, opts: UpdateOptions, cmd: Command) => {
      const ctx = context(cmd);
      const f = await findFrame(ctx.fp, opts.project, ref);
      const body: Schemas['UpdateFrameBody'] = {};
      if (opts.name) body.name = opts.name;
      if (opts.branch) body.git_repository_branch = opts.branch;
      if (opts.port) body.port = count(opts.port, '--port');
      if (opts.healthCheckPath) body.health_check_path = opts.healthCheckPath;
      if (Object.keys(body).length === 0) throw new CliError('nothing to change', EXIT.usage);
      const { ifMatch, deploy } = opts;
      const { frame } = await ctx.fp.updateFrame(f, body, { ifMatch, deploy });
      showFrame(ctx, frame);
    });
  frames
    .command('scale <frame> <replicas>')
    .description('run this many replicas')
    .requiredOption(...projectOption)
    .action(async (ref: string, replicas: string, opts: { project: string }, cmd: Command) => {
      const ctx = context(cmd);
      const f = await findFrame(ctx.fp, opts.project, ref);
      const replica_count = count(replicas, 'replicas');
      showFrame(ctx, (await ctx.fp.updateFrame(f, { replica_count })).frame);
    });
  frames
    .command('delete <frame>')
    .description('delete a frame, its domains and volumes')
    .requiredOption(...projectOption)
    .option('--yes', 'really (required: nothing asks again)')
    .action(async (ref: string, opts: { project: string; yes?: boolean }, cmd: Command) => {
      if (!opts.yes) throw new CliError('deleting needs --yes', EXIT.usage);
      const { fp, show } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const deleted = await fp.call(
        fp.api.DELETE('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}', {
          params: { path: pathOf(f) },
        }),
      );
      show(deleted, (d) => note(`Deleted ${f.name} (${d.id}).`));
    });

  const env = frames.command('env').description("a frame's environment variables");
  const envPath = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/env' as const;
  const showEnv = (vars: Record<string, string | null>) =>
    table(
      Object.entries(vars).map(([name, value]) => ({
        name,
        value: value ?? paint('(hidden)', 'dim'),
      })),
      ['name', 'value'],
    );
  env
    .command('list <frame>')
    .description('the variables (values hidden from viewers)')
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const answer = await fp.call(fp.api.GET(envPath, { params: { path: pathOf(f) } }));
      show(answer, (a) => showEnv(a.vars));
    });
  const deployOption = [
    '--deploy',
    'apply it at once: a release of the serving build with the new env, nothing built',
  ] as const;
  env
    .command('set <frame> <NAME=value...>')
    .description('set variables; what runs takes them at the next deploy, or now with --deploy')
    .requiredOption(...projectOption)
    .option(...deployOption)
    .action(async (ref: string, pairs: string[], opts: EnvOptions, cmd: Command) => {
      const vars: Record<string, string> = {};
      for (const pair of pairs) {
        const at = pair.indexOf('=');
        if (at < 1) throw new CliError(`"${pair}" is not NAME=value`, EXIT.usage);
        vars[pair.slice(0, at)] = pair.slice(at + 1);
      }
      await patchEnv(cmd, ref, opts, vars);
    });
  env
    .command('unset <frame> <NAME...>')
    .description('remove variables; what runs keeps them until the next deploy, or --deploy')
    .requiredOption(...projectOption)
    .option(...deployOption)
    .action(async (ref: string, names: string[], opts: EnvOptions, cmd: Command) => {
      await patchEnv(cmd, ref, opts, Object.fromEntries(names.map((n) => [n, null])));
    });

  async function patchEnv(
    cmd: Command,
    ref: string,
    opts: EnvOptions,
    vars: Record<string, string | null>,
  ) {
    const { fp, show, json } = context(cmd);
    const f = await findFrame(fp, opts.project, ref);
    const answer = await fp.call(
      fp.api.PATCH(envPath, {
        params: { path: pathOf(f), query: opts.deploy ? { deploy: true } : {} },
        body: { vars },
      }),
    );
    show(answer, (a) => {
      showEnv(a.vars);
      details({ changed: Object.keys(vars).join(', '), deployment: a.deployment?.id });
    });
    // What runs keeps the env of its deployment (a restart too): say how the change applies.
    if (json) return;
    if (answer.deployment)
      note(`${f.name}: released as ${answer.deployment.id} (frameplane frames show ${f.name}).`);
    else
      note(
        `${f.name}: the change applies at the next deploy (frameplane frames deploy ${f.name}, ` +
          'or --deploy next time).',
      );
  }
}
