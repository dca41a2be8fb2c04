// projects webhook show/rotate: the address and secret a git host signs its pushes with
// (src/webhooks). The API answers the secret to a project's admins, so `show` prints it;
// `rotate` makes a new one, and the old one stops verifying at once.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context, group } from './context.ts';
import { details, note, paint } from './output.ts';
import { projectId } from './resolve.ts';

const hookRow = (w: Schemas['Webhook']) => ({
  url: w.url,
  'content type': w.content_type,
  events: w.events.join(', '),
  secret: w.secret || paint('not set', 'yellow'),
});

export function register(program: Command) {
  const webhook = group(program, 'projects')
    .command('webhook')
    .description("the project's git webhook: where a push goes and the secret that signs it");
  webhook
    .command('show <project>')
    .description('the address and secret to give the git host (admin)')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { project_id: await projectId(fp, ref) };
      const hook = await fp.call(
        fp.api.GET('/v2/projects/{project_id}/webhook', { params: { path } }),
      );
      show(hook, (w) => details(hookRow(w)));
    });
  webhook
    .command('rotate <project>')
    .description('a new secret (admin): the old one stops verifying pushes at once')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { project_id: await projectId(fp, ref) };
      const hook = await fp.call(
        fp.api.POST('/v2/projects/{project_id}/webhook', { params: { path } }),
      );
      show(hook, (w) => {
        details(hookRow(w));
        note(
          paint(
            'Give the git host this new secret: pushes signed with the old one are refused.',
            'dim',
            process.stderr,
          ),
        );
      });
    });
}
