// orgs members list/set-role/remove, orgs invite, orgs invitations list/revoke/resend, and
// orgs accept/decline of an invitation's link: the people of an organization.
import type { Command } from 'commander';
import type { Frameplane, Schemas } from '../sdk/index.ts';
import { context, group } from './context.ts';
import { named } from './names.ts';
import { details, note, paint, printJson, table } from './output.ts';
import { invitationToken, memberId, orgId } from './resolve.ts';
import { decline } from './teams.ts';

type Role = Schemas['OrgRoleBody']['role'];

/** An org's member by user id or e-mail. */
const orgMember = (fp: Frameplane, org_id: string, ref: string) =>
  memberId(
    fp.pages((cursor) =>
      fp.api.GET('/v2/orgs/{org_id}/members', {
        params: { path: { org_id }, query: { cursor, limit: 200 } },
      }),
    ),
    ref,
  );

const invitationRow = (i: Schemas['OrgInvitation']) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  status: i.status,
  expires: i.expires_at,
});

function registerMembers(orgs: Command) {
  const members = orgs.command('members').description("an organization's members");
  members
    .command('list <org>')
    .description('the members (by org id or slug), with their roles')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/orgs/{org_id}/members', { params: { path, query: { cursor } } }),
      );
      show(all, (list) =>
        table(
          list.map((m) => ({ ...m, joined: m.joined_at })),
          ['user_id', 'email', 'name', 'role', 'joined'],
        ),
      );
    });
  members
    .command('set-role <org> <member> <role>')
    .description("change a member's role to member or admin (member by user id or e-mail)")
    .action(async (ref: string, who: string, role: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const org_id = await orgId(fp, ref);
      const path = { org_id, user_id: await orgMember(fp, org_id, who) };
      const member = await fp.call(
        fp.api.PATCH('/v2/orgs/{org_id}/members/{user_id}', {
          params: { path },
          body: { role: role as Role },
        }),
      );
      show(member, (m) => details({ email: m.email, role: m.role }));
    });
  members
    .command('remove <org> <member>')
    .description('remove a member (by user id or e-mail; admin)')
    .action(async (ref: string, who: string, _opts, cmd: Command) => {
      const { fp, json } = context(cmd);
      const org_id = await orgId(fp, ref);
      const path = { org_id, user_id: await orgMember(fp, org_id, who) };
      await fp.call(fp.api.DELETE('/v2/orgs/{org_id}/members/{user_id}', { params: { path } }));
      if (!json) note(`${who} is no longer a member of ${ref}.`);
    });
}

function registerInvitations(orgs: Command) {
  orgs
    .command('invite <org> <email>')
    .description('invite someone by e-mail (admin); they accept the link in it')
    .option('--role <role>', 'member or admin', 'member')
    .action(async (ref: string, email: string, opts: { role: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      const body = { email, role: opts.role as Role };
      const invitation = await fp.call(
        fp.api.POST('/v2/orgs/{org_id}/invitations', { params: { path }, body }),
      );
      show(invitation, (i) => {
        details(invitationRow(i));
        note(paint(`An e-mail with the link is on its way to ${i.email}.`, 'dim', process.stderr));
      });
    });

  const invitations = orgs
    .command('invitations')
    .description("an organization's invitations (admin)");
  invitations
    .command('list <org>')
    .description('the invitations sent, with their status')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/orgs/{org_id}/invitations', { params: { path, query: { cursor } } }),
      );
      show(all, (list) =>
        table(list.map(invitationRow), ['id', 'email', 'role', 'status', 'expires']),
      );
    });
  invitations
    .command('revoke <org> <invitation>')
    .description('take an invitation back: its link stops working')
    .action(async (ref: string, invitation_id: string, _opts, cmd: Command) => {
      const { fp, json } = context(cmd);
      const path = { org_id: await orgId(fp, ref), invitation_id };
      await fp.call(
        fp.api.DELETE('/v2/orgs/{org_id}/invitations/{invitation_id}', { params: { path } }),
      );
      if (!json) note(`Invitation ${invitation_id}: revoked.`);
    });
  invitations
    .command('resend <org> <invitation>')
    .description('send it again with a new link (the old one stops working) for 7 more days')
    .action(async (ref: string, invitation_id: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { org_id: await orgId(fp, ref), invitation_id };
      const invitation = await fp.call(
        fp.api.POST('/v2/orgs/{org_id}/invitations/{invitation_id}/resend', { params: { path } }),
      );
      show(invitation, (i) => details(invitationRow(i)));
    });

  orgs
    .command('accept <link-or-token>')
    .description('join the organization of an invitation (the link from the e-mail, or its token)')
    .action(async (link: string, _opts, cmd: Command) => {
      const ctx = context(cmd);
      const { fp } = ctx;
      const path = { token: invitationToken(link) };
      const membership = await fp.call(
        fp.api.POST('/v2/orgs/invitations/{token}/accept', { params: { path } }),
      );
      if (ctx.json) return printJson(membership);
      const org = await fp.call(
        fp.api.GET('/v2/orgs/{org_id}', { params: { path: { org_id: membership.org_id } } }),
      );
      details({
        org: named(ctx, org.name, org.id),
        role: membership.role,
        email: membership.email,
      });
    });
  decline(orgs, 'orgs');
}

export function register(program: Command) {
  const orgs = group(program, 'orgs');
  registerMembers(orgs);
  registerInvitations(orgs);
}
