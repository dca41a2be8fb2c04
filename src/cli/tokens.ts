// tokens list/create/revoke: personal tokens for scripts and CI.
import type { Command } from 'commander';
import { context } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { details, note, table } from './output.ts';

export function register(program: Command) {
  const tokens = program.command('tokens').description('your personal tokens and sessions');
  tokens
    .command('list')
    .description('your tokens (never their secrets)')
    .action(async (_opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/user/tokens', { params: { query: { cursor } } }),
      );
      show(all, (list) =>
        table(
          list.map((t) => ({ ...t, expires: t.expires_at, used: t.last_used_at })),
          ['id', 'name', 'kind', 'expires', 'used'],
        ),
      );
    });
  tokens
    .command('create <name>')
    .description('a personal token; its secret is shown once')
    .option('--expires-in-days <n>', 'it expires after n days (default: never)')
    .action(async (name: string, opts: { expiresInDays?: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const days = opts.expiresInDays === undefined ? undefined : Number(opts.expiresInDays);
      if (days !== undefined && !Number.isInteger(days))
        throw new CliError('--expires-in-days must be a whole number', EXIT.usage);
      const token = await fp.call(
        fp.api.POST('/v2/user/tokens', { body: { name, expires_in_days: days } }),
      );
      show(token, (t) => {
        details({ id: t.id, name: t.name, expires: t.expires_at, token: t.token });
        note('Keep the token now: it is not shown again.');
      });
    });
  tokens
    .command('revoke <id>')
    .description('revoke a token at once')
    .action(async (token_id: string, _opts, cmd: Command) => {
      const { fp, json } = context(cmd);
      await fp.call(
        fp.api.DELETE('/v2/user/tokens/{token_id}', { params: { path: { token_id } } }),
      );
      if (!json) note(`Token ${token_id} revoked.`);
    });
}
