// frames volumes list/add/remove: a frame's persistent volumes. The API has no resize or
// update: a volume is added or removed, and the agent mounts the set on its next rollout, or
// at once with --deploy (a config release of the serving build).
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context, group, projectOption } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { pathOf } from './frames.ts';
import { details, note, table } from './output.ts';
import { frame as findFrame, pick } from './resolve.ts';

interface VolumeOptions {
  project: string;
  deploy?: boolean;
}

const volumesPath = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/volumes';
const volumeRow = (v: Schemas['Volume']) => ({
  id: v.id,
  name: v.name,
  mount: v.mount_path,
  size: `${v.size_gb} GB`,
});

const deployOption = [
  '--deploy',
  'apply it at once: a release of the serving build with the new volumes, nothing built',
] as const;

/** How the change reaches what runs: the release --deploy started, or the next rollout. */
function applied(frame: string, deployment?: { id: string }) {
  if (deployment) note(`${frame}: released as ${deployment.id} (frameplane frames show ${frame}).`);
  else
    note(
      `${frame}: on docker and process agents, what runs keeps its mounts until the next ` +
        'deploy, restart or start (--deploy applies it at once).',
    );
}

export function register(program: Command) {
  const volumes = group(program, 'frames')
    .command('volumes')
    .description("a frame's volumes (kept across deployments; no resize: add another)");
  volumes
    .command('list <frame>')
    .description("the frame's volumes")
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = pathOf(await findFrame(fp, opts.project, ref));
      const all = await fp.all((cursor) =>
        fp.api.GET(volumesPath, { params: { path, query: { cursor } } }),
      );
      show(all, (list) => table(list.map(volumeRow), ['id', 'name', 'mount', 'size']));
    });
  volumes
    .command('add <frame> <name>')
    .description('add a volume (project admin); mounted on the next rollout')
    .requiredOption(...projectOption)
    .requiredOption('--mount <path>', 'where the app sees it (an absolute path)')
    .requiredOption('--size <gb>', 'its size in GB')
    .option(...deployOption)
    .action(
      async (
        ref: string,
        name: string,
        opts: VolumeOptions & { mount: string; size: string },
        cmd: Command,
      ) => {
        const size_gb = Number(opts.size);
        if (!Number.isInteger(size_gb) || size_gb < 1)
          throw new CliError(`--size must be a whole number of GB, got "${opts.size}"`, EXIT.usage);
        const { fp, show, json } = context(cmd);
        const f = await findFrame(fp, opts.project, ref);
        const body = { name, mount_path: opts.mount, size_gb };
        const query = opts.deploy ? { deploy: true } : {};
        const volume = await fp.call(
          fp.api.POST(volumesPath, { params: { path: pathOf(f), query }, body }),
        );
        show(volume, (v) =>
          details({ ...volumeRow(v), created: v.created_at, deployment: v.deployment?.id }),
        );
        if (!json) applied(f.name, volume.deployment);
      },
    );
  volumes
    .command('remove <frame> <volume>')
    .description('remove a volume (by id or name; project admin): the next rollout runs without it')
    .requiredOption(...projectOption)
    .option(...deployOption)
    .action(async (ref: string, which: string, opts: VolumeOptions, cmd: Command) => {
      const { fp, json, show } = context(cmd);
      const f = await findFrame(fp, opts.project, ref);
      const all = fp.pages((cursor) =>
        fp.api.GET(volumesPath, { params: { path: pathOf(f), query: { cursor, limit: 200 } } }),
      );
      const v = await pick(all, (x) => x.name, which, 'volume', `on frame ${f.name}`);
      const answer = await fp.call(
        fp.api.DELETE(`${volumesPath}/{volume_id}`, {
          params: {
            path: { ...pathOf(f), volume_id: v.id },
            query: opts.deploy ? { deploy: true } : {},
          },
        }),
      );
      // Without --deploy the answer is a 204: --json prints nothing, as before.
      if (answer) show(answer, () => {});
      if (json) return;
      note(`Removed volume ${v.name} (${v.mount_path}) from ${f.name}.`);
      applied(f.name, answer?.deployment);
    });
}
