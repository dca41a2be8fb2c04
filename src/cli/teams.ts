// teams create/list/show, members list, invite, invitations accept/decline.
import type { Command } from 'commander';
import { type Schemas, slugOf } from '../sdk/index.ts';
import { context } from './context.ts';
import { answerById, isInvitationId, registerPending } from './my-invitations.ts';
import { named } from './names.ts';
import { details, note, paint, printJson, table } from './output.ts';
import { invitationToken, teamId } from './resolve.ts';

const ROLES = 'viewer, member or admin';

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
    .command('accept <link-or-id>')
    .description('join the team of an invitation (the e-mailed link or its token, or its id)')
    .action(async (link: string, _opts, cmd: Command) => {
      const ctx = context(cmd);
      if (isInvitationId(link)) return answerById(ctx, link, 'accept');
      const { fp } = ctx;
      const token = invitationToken(link);
      const membership = await fp.call(
        fp.api.POST('/v2/teams/invitations/{token}/accept', { params: { path: { token } } }),
      );
      if (ctx.json) return printJson(membership);
      const path = { team_id: membership.team_id };
      const team = await fp.call(fp.api.GET('/v2/teams/{team_id}', { params: { path } }));
      details({
        team: named(ctx, team.name, team.id),
        role: membership.role,
        email: membership.email,
      });
    });
  decline(invitations, 'teams');
  registerPending(invitations);
}

/** `decline <link-or-token>` of a team's or an org's invitation: the token suffices. */
export function decline(parent: Command, kind: 'teams' | 'orgs') {
  const group = kind === 'teams' ? 'a team' : 'an organization';
  parent
    .command('decline <link-or-id>')
    .description(`decline an invitation to ${group} (the link works without logging in)`)
    .action(async (link: string, _opts, cmd: Command) => {
      if (isInvitationId(link)) return answerById(context(cmd), link, 'decline');
      const { fp, json } = context(cmd, true);
      const path = { token: invitationToken(link) };
      await fp.call(fp.api.POST(`/v2/${kind}/invitations/{token}/decline`, { params: { path } }));
      if (!json) note('Invitation declined.');
    });
}
