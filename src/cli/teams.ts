// teams create/list/show, members list, invite, invitations accept.
import type { Command } from 'commander';
import type { Schemas } from '../sdk/index.ts';
import { context } from './context.ts';
import { details, note, paint, table } from './output.ts';
import { invitationToken, teamId } from './resolve.ts';

const ROLES = 'viewer, member or admin';

/** A slug from a name: "Web Team!" → "web-team". */
export const slugOf = (name: string, fallback = 'team') =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63) || fallback;

const teamRow = (t: Schemas['Team']) => ({
  id: t.id,
  slug: t.slug,
  name: t.name,
  role: t.role,
  members: t.member_count,
});

export function register(program: Command) {
  const teams = program.command('teams').description('teams you belong to');
  teams
    .command('create <name>')
    .description('create a team; you are its owner')
    .option('--slug <slug>', 'its short name (default: from the name)')
    .action(async (name: string, opts: { slug?: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const team = await fp.call(
        fp.api.POST('/v2/teams', { body: { name, slug: opts.slug ?? slugOf(name) } }),
      );
      show(team, (t) => details(teamRow(t)));
    });
  teams
    .command('list')
    .description('the teams you belong to, with your role')
    .action(async (_opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/teams', { params: { query: { cursor } } }),
      );
      show(all, (list) => table(list.map(teamRow), ['id', 'slug', 'name', 'role', 'members']));
    });
  teams
    .command('show <team>')
    .description('one team (by id or slug)')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const team_id = await teamId(fp, ref);
      const team = await fp.call(
        fp.api.GET('/v2/teams/{team_id}', { params: { path: { team_id } } }),
      );
      show(team, (t) => details({ ...teamRow(t), created: t.created_at }));
    });

  const members = program.command('members').description("a team's members");
  members
    .command('list <team>')
    .description('members of a team (by id or slug), with their roles')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { team_id: await teamId(fp, ref) };
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/teams/{team_id}/members', { params: { path, query: { cursor } } }),
      );
      show(all, (list) =>
        table(
          list.map((m) => ({ ...m, joined: m.joined_at })),
          ['user_id', 'email', 'name', 'role', 'joined'],
        ),
      );
    });

  program
    .command('invite <team> <email>')
    .description('invite someone to a team by e-mail (they accept the link in it)')
    .option('--role <role>', ROLES, 'member')
    .action(async (ref: string, email: string, opts: { role: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { team_id: await teamId(fp, ref) };
      const role = opts.role as Schemas['CreateInvitationBody']['role'];
      const invitation = await fp.call(
        fp.api.POST('/v2/teams/{team_id}/invitations', { params: { path }, body: { email, role } }),
      );
      show(invitation, (i) => {
        details({
          id: i.id,
          email: i.email,
          role: i.role,
          status: i.status,
          expires: i.expires_at,
        });
        note(paint(`An e-mail with the link is on its way to ${i.email}.`, 'dim', process.stderr));
      });
    });

  const invitations = program.command('invitations').description('invitations sent to you');
  invitations
    .command('accept <link-or-token>')
    .description('join the team of an invitation (the link from the e-mail, or its token)')
    .action(async (link: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const token = invitationToken(link);
      const membership = await fp.call(
        fp.api.POST('/v2/teams/invitations/{token}/accept', { params: { path: { token } } }),
      );
      show(membership, (m) => details({ team: m.team_id, role: m.role, email: m.email }));
    });
}
