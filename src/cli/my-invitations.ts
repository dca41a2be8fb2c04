// Invitations addressed to the caller: `invitations pending` lists them, and `invitations
// accept|decline` take one of its ids as well as an e-mailed link (teams.ts). By id needs the
// login of an account whose address is proven (the API's rule); the link works for anyone.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { type Context, context } from './context.ts';
import { details, note, printJson, table } from './output.ts';
import { CliError, EXIT } from './exit-codes.ts';

type Mine = Schemas['InvitationForUser'];

/** An invitation's id (`inv_` and a ULID), not its token (`inv_` and 43 characters). */
export const isInvitationId = (arg: string) => /^inv_[0-9A-HJKMNP-TV-Z]{26}$/i.test(arg.trim());

async function pending(fp: Context['fp']): Promise<Mine[]> {
  return fp.all((cursor) => fp.api.GET('/v2/user/invitations', { params: { query: { cursor } } }));
}

const where = (i: Mine) => `${i.kind === 'org' ? 'org ' : ''}${i.team.name}`;

export function registerPending(invitations: Command) {
  invitations
    .command('pending')
    .description('invitations to you, waiting for an answer (answer one by its id)')
    .action(async (_opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      show(await pending(fp), (list) => {
        if (!list.length) return note('No invitations are waiting for you.');
        table(
          list.map((i) => ({ id: i.id, to: where(i), role: i.role, expires: i.expires_at })),
          ['id', 'to', 'role', 'expires'],
        );
      });
    });
}

/** Answers the caller's invitation `id`, saying to what, from the list it comes from. */
export async function answerById(ctx: Context, id: string, answer: 'accept' | 'decline') {
  const { fp } = ctx;
  const inv = (await pending(fp)).find((i) => i.id === id.trim());
  if (!inv)
    throw new CliError(
      `No invitation ${id} is waiting for you (see \`frameplane invitations pending\`)`,
      EXIT.notFound,
    );
  const path = { invitation_id: inv.id };
  const route = `/v2/user/invitations/{invitation_id}/${answer}` as const;
  await fp.call(fp.api.POST(route, { params: { path } }));
  if (ctx.json) return printJson({ id: inv.id, kind: inv.kind, team_id: inv.team_id, answer });
  if (answer === 'decline') return note(`Declined the invitation to ${where(inv)}.`);
  details({ joined: where(inv), role: inv.role });
}
