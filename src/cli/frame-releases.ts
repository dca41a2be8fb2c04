// frames deployments, restart and rollback (issue 36): a frame's releases, and going back to
// one without building it again.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context, group, projectOption } from './context.ts';
import { operate, operation, pathOf } from './frames.ts';
import { table } from './output.ts';
import { frame as findFrame } from './resolve.ts';
import { deployed } from './wait.ts';

const FRAME = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}';

const row = (d: Schemas['Deployment']) => ({
  id: d.id,
  trigger: d.trigger,
  status: d.status,
  commit: d.commit_sha?.slice(0, 12),
  'build of': d.release_of ?? undefined,
  created: d.created_at,
  reason: d.failure_reason ?? undefined,
});

export function register(program: Command) {
  const frames = group(program, 'frames');
  frames
    .command('deployments <frame>')
    .description("a frame's deployments (its releases), newest first")
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const page = await fp.call(
        fp.api.GET(`${FRAME}/deployments`, { params: { path: pathOf(f), query: {} } }),
      );
      show(page.data, (list) =>
        table(list.map(row), ['id', 'trigger', 'status', 'commit', 'build of', 'created']),
      );
    });

  operation(
    frames,
    'restart',
    'replace its replicas with the serving release again, nothing built (--wait: until Online)',
  ).action((ref: string, opts: { project: string; wait?: boolean; timeout: string }, cmd) =>
    operate(cmd, ref, opts, async (fp, f) => {
      const d = await fp.call(fp.api.POST(`${FRAME}/restart`, { params: { path: pathOf(f) } }));
      return deployed(d.id);
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
          return deployed(d.id);
        }),
    );
}
