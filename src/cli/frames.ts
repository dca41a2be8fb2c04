// frames create/list/show/stop/start/deploy (settings: frame-settings.ts; logs, events and
// status: frame-history.ts). A frame is named by id or name, within the
// project given by --project (id or name).
import type { Command } from 'commander';
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { noUrl, printUrl, urlCell } from './address.ts';
import { type Context, context, projectOption } from './context.ts';
import { statusText } from '../sdk/event-text.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { details, note, paint, statusColour, table } from './output.ts';
import { frame as findFrame, projectId, spaceId } from './resolve.ts';
import { deployed, online, stopped, type Verdict, waitFor } from './wait.ts';

type Frame = Schemas['Frame'];
export const pathOf = (f: Frame) => ({
  project_id: f.project_id,
  space_id: f.space_id,
  frame_id: f.id,
});
const colours = { status: statusColour };

const frameRow = (f: Frame) => ({
  id: f.id,
  name: f.name,
  status: f.status,
  // Where it answers; a frame whose agent has no edge has only its hostname.
  url: f.url ?? f.hostname,
  replicas: f.replica_count,
  repository: `${f.git_repository_owner}/${f.git_repository}#${f.git_repository_branch}`,
  runtime: f.runtime.kind === 'agent' ? `agent ${f.agent_id}` : 'cloud',
});

/** A preview says what it previews; a frame that makes previews says for how long. */
function previewLines(v: Frame) {
  const p = v.preview;
  if (p) return { 'preview of': `${p.of} (${p.branch}), removed ${p.expires_at} unless pushed` };
  if (v.previews.enabled) return { previews: `on, ${v.previews.ttl_days} days without a push` };
  return {};
}

export function showFrame(ctx: Context, f: Frame) {
  ctx.show(f, (v) => {
    const row = frameRow(v);
    details({
      id: row.id,
      name: row.name,
      status: paint(statusText(v.status, v.status_reason), statusColour(v.status)),
      url: urlCell(v),
      hostname: v.hostname,
      replicas: row.replicas,
      repository: row.repository,
      runtime: row.runtime,
      port: v.port,
      deployment: v.latest_deployment
        ? `${v.latest_deployment.id} ${v.latest_deployment.status}`
        : null,
      ...previewLines(v),
      'push deploys': v.push_deploys.enabled
        ? 'on'
        : paint(`paused since ${v.push_deploys.paused_at} (frames push-deploys on)`, 'yellow'),
      updated: v.updated_at,
    });
  });
}

interface WaitOptions {
  project: string;
  wait?: boolean;
  timeout: string;
}

/** Runs stop/start/deploy; with --wait, follows the frame to the final status. */
export async function operate(
  cmd: Command,
  ref: string,
  opts: WaitOptions,
  run: (fp: Frameplane, f: Frame) => Promise<Verdict>,
) {
  const ctx = context(cmd);
  const f = await findFrame(ctx.fp, opts.project, ref);
  const verdict = await run(ctx.fp, f);
  if (!opts.wait) return showFrame(ctx, await readFrame(ctx.fp, f));
  const seconds = Number(opts.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new CliError(`--timeout must be a number of seconds, got "${opts.timeout}"`, EXIT.usage);
  const { frame, result } = await waitFor(ctx.fp, f, verdict, seconds * 1000, !ctx.json);
  if (ctx.json) ctx.show(frame, () => {});
  // Online at last (deploy, start): where it answers now.
  else if (result === 'ok' && frame.status === 'Online') printUrl(frame);
  if (result === 'failed') {
    if (!ctx.json) await explainFailure(ctx.fp, frame, !verdict.logsSince);
    process.exitCode = EXIT.waitFailed;
  }
  if (result === 'timeout') process.exitCode = EXIT.waitTimeout;
}

/** Why a waited-for deployment failed, on stderr; and the frame's last log lines (its build's,
 *  for a build that failed) unless they were shown as they came (`tail`). */
async function explainFailure(fp: Frameplane, frame: Frame, tail: boolean) {
  const d = frame.latest_deployment;
  if (d?.status !== 'failed') return;
  note(
    paint(
      `deployment ${d.id} failed: ${d.failure_reason ?? 'unknown reason'}`,
      'red',
      process.stderr,
    ),
  );
  if (d.failure_message) note(d.failure_message);
  if (!tail) return;
  const logs = (await fp.call(
    fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/logs', {
      params: { path: pathOf(frame), query: { tail: 20 } },
    }),
  )) as Schemas['LogLineList'];
  if (logs.data.length === 0) return;
  note(paint('the last log lines:', 'bold', process.stderr));
  for (const l of logs.data) note(`  ${l.line}`);
}

export const readFrame = (fp: Frameplane, f: Frame) =>
  fp.call(
    fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}', {
      params: { path: pathOf(f) },
    }),
  );

export function operation(frames: Command, name: string, description: string) {
  return frames
    .command(`${name} <frame>`)
    .description(description)
    .requiredOption(...projectOption)
    .option('--wait', 'follow the frame until the final status; exit 6 if it fails')
    .option('--timeout <seconds>', 'with --wait: give up after this long (exit 7)', '600');
}

export function register(program: Command) {
  const frames = program.command('frames').description('frames: the apps of a project');
  frames
    .command('create')
    .description('create a frame from a Git repository (it deploys at once)')
    .requiredOption(...projectOption)
    .requiredOption('--name <name>', 'its name')
    .requiredOption('--repo <owner/name>', 'the Git repository')
    .option('--branch <branch>', 'the branch to deploy', 'main')
    .requiredOption(
      '--port <port>',
      'the port the app listens on inside its container (its PORT), not a port of the host',
    )
    .option('--space <space>', 'the space, by id or name (default: the first one)')
    .option('--agent <agent>', 'run it on this self-hosted agent (default: the cloud)')
    .option('--replicas <n>', 'how many replicas')
    .action(async (opts, cmd: Command) => {
      const ctx = context(cmd);
      const { fp } = ctx;
      const project_id = await projectId(fp, opts.project);
      const space_id = opts.space
        ? await spaceId(fp, project_id, opts.space, opts.project)
        : (
            await fp.call(
              fp.api.GET('/v2/projects/{project_id}/spaces', { params: { path: { project_id } } }),
            )
          ).data[0]?.id;
      const [owner, repo] = String(opts.repo).split('/');
      if (!owner || !repo) throw new CliError('--repo must be owner/name', EXIT.usage);
      const me = await fp.call(fp.api.GET('/v2/user'));
      const frame = await fp.call(
        fp.api.POST('/v2/projects/{project_id}/spaces/{space_id}/frames', {
          params: { path: { project_id, space_id: space_id ?? '' } },
          body: {
            name: opts.name,
            owner_id: me.id,
            git_repository: repo,
            git_repository_owner: owner,
            git_repository_branch: opts.branch,
            port: Number(opts.port),
            ...(opts.agent ? { agent_id: opts.agent } : {}),
            ...(opts.replicas ? { replica_count: Number(opts.replicas) } : {}),
          },
        }),
      );
      showFrame(ctx, frame);
      if (ctx.json) return;
      if (frame.url) note(`${frame.name} will answer at ${frame.url} once Online.`);
      else note(noUrl(frame));
    });
  frames
    .command('list')
    .description("a project's frames with their status")
    .requiredOption(...projectOption)
    .action(async (opts: { project: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { project_id: await projectId(fp, opts.project) };
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/projects/{project_id}/frames', { params: { path, query: { cursor } } }),
      );
      show(all, (list) =>
        table(
          list.map(frameRow),
          ['id', 'name', 'status', 'url', 'replicas', 'repository', 'runtime'],
          colours,
        ),
      );
    });
  frames
    .command('show <frame>')
    .description('one frame: status, deployment, settings')
    .requiredOption(...projectOption)
    .action(async (ref: string, opts: { project: string }, cmd: Command) => {
      const ctx = context(cmd);
      showFrame(ctx, await readFrame(ctx.fp, await findFrame(ctx.fp, opts.project, ref)));
    });

  const post = (fp: Frameplane, f: Frame, op: 'stop' | 'start') =>
    fp.call(
      fp.api.POST(`/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/${op}`, {
        params: { path: pathOf(f) },
      }),
    );
  operation(frames, 'stop', 'stop every replica (--wait: until Stopped)').action(
    (ref: string, opts: WaitOptions, cmd: Command) =>
      operate(cmd, ref, opts, async (fp, f) => {
        await post(fp, f, 'stop');
        return stopped;
      }),
  );
  operation(frames, 'start', 'start a stopped frame (--wait: until Online)').action(
    (ref: string, opts: WaitOptions, cmd: Command) =>
      operate(cmd, ref, opts, async (fp, f) => {
        await post(fp, f, 'start');
        return online;
      }),
  );
  operation(
    frames,
    'deploy',
    'deploy the branch again (--wait: until the deployment is Online)',
  ).action((ref: string, opts: WaitOptions, cmd: Command) =>
    operate(cmd, ref, opts, async (fp, f) => {
      const d = await fp.call(
        fp.api.POST('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/deploy', {
          params: { path: pathOf(f) },
          body: {},
        }),
      );
      return deployed(d);
    }),
  );
}
