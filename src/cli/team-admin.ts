// What a team's admins do after creating it: rename, members set-role/remove, invitations
// list/revoke/resend; and leave, for any member.
import type { Command } from 'commander';
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { context, group } from './context.ts';
import { details, note, table } from './output.ts';
import { memberId, teamId } from './resolve.ts';

type Role = Schemas['RoleBody']['role'];

/** A team's member by user id or e-mail. */
const teamMember = (fp: Frameplane, team_id: string, ref: string) =>
  memberId(
    fp.pages((cursor) =>
      fp.api.GET('/v2/teams/{team_id}/members', {
        params: { path: { team_id }, query: { cursor, limit: 200 } },
      }),
    ),
    ref,
  );

export function register(program: Command) {
  group(program, 'teams')
    .command('rename <team> <name>')
    .description('give a team a new name (and --slug)')
    .option('--slug <slug>', 'a new slug too')
    .action(async (ref: string, name: string, opts: { slug?: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { team_id: await teamId(fp, ref) };
      const team = await fp.call(
        fp.api.PATCH('/v2/teams/{team_id}', { params: { path }, body: { name, slug: opts.slug } }),
      );
      show(team, (t) => details({ id: t.id, slug: t.slug, name: t.name }));
    });

  const members = group(program, 'members');
  members
    .command('set-role <team> <member> <role>')
    .description("change a member's role (member by user id or e-mail)")
    .action(async (ref: string, who: string, role: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const team_id = await teamId(fp, ref);
      const path = { team_id, user_id: await teamMember(fp, team_id, who) };
      const member = await fp.call(
        fp.api.PATCH('/v2/teams/{team_id}/members/{user_id}', {
          params: { path },
          body: { role: role as Role },
        }),
      );
      show(member, (m) => details({ email: m.email, role: m.role }));
    });
  members
    .command('remove <team> <member>')
    .description('remove a member from a team (by user id or e-mail)')
    .action(async (ref: string, who: string, _opts, cmd: Command) => {
      const { fp, json } = context(cmd);
      const team_id = await teamId(fp, ref);
      const path = { team_id, user_id: await teamMember(fp, team_id, who) };
      await fp.call(fp.api.DELETE('/v2/teams/{team_id}/members/{user_id}', { params: { path } }));
      if (!json) note(`${who} is no longer a member of ${ref}.`);
    });

  const invitations = group(program, 'invitations');
  invitations
    .command('list <team>')
    .description("a team's invitations")
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { team_id: await teamId(fp, ref) };
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/teams/{team_id}/invitations', { params: { path, query: { cursor } } }),
      );
      show(all, (list) =>
        table(
          list.map((i) => ({ ...i, expires: i.expires_at })),
          ['id', 'email', 'role', 'status', 'expires'],
        ),
      );
    });
  for (const [name, description] of [
    ['revoke', 'revoke an invitation: its link stops working'],
    ['resend', 'send an invitation again, with a new link'],
  ] as const)
    invitations
      .command(`${name} <team> <invitation>`)
      .description(description)
      .action(async (ref: string, invitation_id: string, _opts, cmd: Command) => {
        const { fp, json } = context(cmd);
        const path = { team_id: await teamId(fp, ref), invitation_id };
        if (name === 'revoke')
          await fp.call(
            fp.api.DELETE('/v2/teams/{team_id}/invitations/{invitation_id}', { params: { path } }),
          );
        else
          await fp.call(
            fp.api.POST('/v2/teams/{team_id}/invitations/{invitation_id}/resend', {
              params: { path },
            }),
          );
        if (!json) note(`Invitation ${invitation_id}: ${name === 'revoke' ? 'revoked' : 'sent'}.`);
      });

  program
    .command('leave <team>')
    .description('leave a team (its owner cannot: transfer it first)')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, json } = context(cmd);
      const path = { team_id: await teamId(fp, ref) };
      await fp.call(fp.api.POST('/v2/teams/{team_id}/leave', { params: { path } }));
      if (!json) note(`You left ${ref}.`);
    });
}
