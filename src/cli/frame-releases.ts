// frames deployments list/show, restart, rollback and push-deploys (issue 36): a frame's
// releases, what each changed, and going back to one without building it again.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context, group, projectOption } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { operate, operation, pathOf, showFrame } from './frames.ts';
import { details, table } from './output.ts';
import { frame as findFrame } from './resolve.ts';
import { deployed } from './wait.ts';

const FRAME = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}';

const row = (d: Schemas['Release']) => ({
  id: d.id,
  trigger: d.trigger,
  status: d.status,
  commit: d.commit_sha?.slice(0, 12),
  'build of': d.release_of ?? undefined,
  created: d.created_at,
  // A deployment that never served is no release: it has nothing to say.
  changes: d.changes || d.status === 'succeeded' ? summary(d.changes) : undefined,
  reason: d.failure_reason ?? undefined,
});

/** One line of what a release changed: "a1b2c3→d4e5f6 · env +NEW ~CHG -OLD · port 80→81". */
export function summary(c: Schemas['Release']['changes']) {
  if (!c) return 'first release';
  const parts: string[] = [];
  if (c.commits) parts.push(`${short(c.commits.from)}→${short(c.commits.to)}`);
  const keys = (mark: string, l: Array<{ key: string }>) => l.map((e) => mark + e.key);
  const env = [...keys('+', c.env.added), ...keys('~', c.env.changed), ...keys('-', c.env.removed)];
  if (env.length) parts.push(`env ${env.join(' ')}`);
  for (const s of c.settings) parts.push(`${s.field} ${s.from}→${s.to}`);
  return parts.join(' · ') || 'no change';
}
const short = (sha: string | null) => sha?.slice(0, 7) ?? '?';

/** Each env change on a line, with its values when the caller may read them. */
function envLines(c: NonNullable<Schemas['Release']['changes']>) {
  const value = (v?: string) => (v === undefined ? '' : ` ${JSON.stringify(v)}`);
  return [
    ...c.env.added.map((e) => `  + ${e.key}${value(e.to)}`),
    ...c.env.changed.map(
      (e) => `  ~ ${e.key}${value(e.from)}${e.to === undefined ? '' : ' →'}${value(e.to)}`,
    ),
    ...c.env.removed.map((e) => `  - ${e.key}${value(e.from)}`),
  ];
}

export function register(program: Command) {
  const frames = group(program, 'frames');
  const deployments = frames
    .command('deployments')
    .description("a frame's deployments: its releases, and what each changed");
  deployments
    .command('list <frame>')
    .alias('ls')
    .description('newest first, each with what it changed against the release before it')
    .requiredOption(...projectOption)
    .option('--limit <n>', 'how many', '20')
    .action(async (ref: string, opts: { project: string; limit: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const limit = Number(opts.limit);
      const page = await fp.call(
        fp.api.GET(`${FRAME}/deployments`, { params: { path: pathOf(f), query: { limit } } }),
      );
      show(page.data, (list) =>
        table(list.map(row), [
          'id',
          'trigger',
          'status',
          'commit',
          'build of',
          'created',
          'changes',
        ]),
      );
    });
  deployments
    .command('show <frame> <deployment>')
    .description('one release: what it ran and what it changed (env values for members)')
    .requiredOption(...projectOption)
    .action(async (ref: string, id: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const d = await fp.call(
        fp.api.GET(`${FRAME}/deployments/{deployment_id}`, {
          params: { path: { ...pathOf(f), deployment_id: id } },
        }),
      );
      show(d, () => {
        details({
          ...row(d),
          commit: d.commit_sha,
          image: d.image ?? undefined,
          finished: d.finished_at ?? undefined,
          message: d.failure_message ?? undefined,
          against: d.changes?.against,
        });
        if (d.changes) for (const l of envLines(d.changes)) console.log(l);
      });
    });

  operation(
    frames,
    'restart',
    'replace its replicas with the serving release again, nothing built (--wait: until Online)',
  ).action((ref: string, opts: { project: string; wait?: boolean; timeout: string }, cmd) =>
    operate(cmd, ref, opts, async (fp, f) => {
      const d = await fp.call(fp.api.POST(`${FRAME}/restart`, { params: { path: pathOf(f) } }));
      return deployed(d);
    }),
  );

  operation(
    frames,
    'rollback',
    'run an earlier release again, nothing built, with the env it ran (--wait: until Online)',
  )
    .argument('<deployment>', 'the deployment to go back to (frames deployments lists them)')
    .option('--current-env', "with the frame's env as it is now instead")
    .action(
      (
        ref: string,
        deployment: string,
        opts: { project: string; wait?: boolean; timeout: string; currentEnv?: boolean },
        cmd: Command,
      ) =>
        operate(cmd, ref, opts, async (fp, f) => {
          const d = await fp.call(
            fp.api.POST(`${FRAME}/deployments/{deployment_id}/rollback`, {
              params: { path: { ...pathOf(f), deployment_id: deployment } },
              body: { config: opts.currentEnv ? 'current' : 'release' },
            }),
          );
          return deployed(d);
        }),
    );

  frames
    .command('push-deploys <frame> <on|off>')
    .description('whether a git push deploys the frame (a rollback turns it off)')
    .requiredOption(...projectOption)
    .action(async (ref: string, state: string, opts: { project: string }, cmd: Command) => {
      if (state !== 'on' && state !== 'off')
        throw new CliError(`say "on" or "off", not "${state}"`, EXIT.usage);
      const ctx = context(cmd);
      const f = await findFrame(ctx.fp, opts.project, ref);
      const { frame } = await ctx.fp.updateFrame(f, { push_deploys: { enabled: state === 'on' } });
      showFrame(ctx, frame);
    });
}
