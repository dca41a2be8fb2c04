// orgs create/list/show/rename/set-base-role/delete/leave/audit: organizations, which own
// projects and give every member `base_role` on them. Members and invitations: org-members.ts.
// An org is named by id or slug.
import type { Command } from 'commander';
import { type Schemas, slugOf } from '../sdk/index.ts';
import { context } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { details, note, paint, table } from './output.ts';
import { orgId } from './resolve.ts';

type Org = Schemas['Org'];
const BASE_ROLES = 'none, viewer, member or admin';

const orgRow = (o: Org) => ({
  id: o.id,
  slug: o.slug,
  name: o.name,
  role: o.role,
  members: o.member_count,
  'base role': o.base_role,
});
const showOrg = (o: Org) =>
  details({ ...orgRow(o), billing: o.billing_status, created: o.created_at });

const auditRow = (e: Schemas['AuditEvent']) => ({
  at: e.at,
  action: e.action,
  actor: e.actor_id,
  target: `${e.target_type} ${e.target_id}`,
});

function positive(raw: string, name: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 200)
    throw new CliError(`${name} must be a whole number from 1 to 200`, EXIT.usage);
  return n;
}

export function register(program: Command) {
  const orgs = program
    .command('orgs')
    .description('organizations: they own projects; members get a base role on them');
  orgs
    .command('create <name>')
    .description('create an organization; you are its owner')
    .option('--slug <slug>', 'its short name (default: from the name)')
    .action(async (name: string, opts: { slug?: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const body = { name, slug: opts.slug ?? slugOf(name, 'org') };
      show(await fp.call(fp.api.POST('/v2/orgs', { body })), showOrg);
    });
  orgs
    .command('list')
    .description('the organizations you are in, with your role')
    .action(async (_opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const all = await fp.all((cursor) =>
        fp.api.GET('/v2/orgs', { params: { query: { cursor } } }),
      );
      show(all, (list) =>
        table(list.map(orgRow), ['id', 'slug', 'name', 'role', 'members', 'base role']),
      );
    });
  orgs
    .command('show <org>')
    .description('one organization (by id or slug)')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      show(await fp.call(fp.api.GET('/v2/orgs/{org_id}', { params: { path } })), showOrg);
    });
  orgs
    .command('rename <org> <name>')
    .description('give an organization a new name (and --slug; admin)')
    .option('--slug <slug>', 'a new slug too')
    .action(async (ref: string, name: string, opts: { slug?: string }, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      const body = { name, slug: opts.slug };
      show(await fp.call(fp.api.PATCH('/v2/orgs/{org_id}', { params: { path }, body })), showOrg);
    });
  orgs
    .command('set-base-role <org> <role>')
    .description(`every member's role on the org's projects: ${BASE_ROLES} (admin)`)
    .action(async (ref: string, role: string, _opts, cmd: Command) => {
      const { fp, show } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      const body = { base_role: role as Org['base_role'] };
      show(await fp.call(fp.api.PATCH('/v2/orgs/{org_id}', { params: { path }, body })), showOrg);
    });
  orgs
    .command('delete <org>')
    .description('delete an organization that owns no project, its members and invitations')
    .option('--yes', 'really (required: nothing asks again)')
    .action(async (ref: string, opts: { yes?: boolean }, cmd: Command) => {
      if (!opts.yes) throw new CliError('deleting needs --yes', EXIT.usage);
      const { fp, json } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      await fp.call(fp.api.DELETE('/v2/orgs/{org_id}', { params: { path } }));
      if (!json) note(`Deleted ${ref}.`);
    });
  orgs
    .command('leave <org>')
    .description('leave an organization (its owner cannot)')
    .action(async (ref: string, _opts, cmd: Command) => {
      const { fp, json } = context(cmd);
      const path = { org_id: await orgId(fp, ref) };
      await fp.call(fp.api.POST('/v2/orgs/{org_id}/leave', { params: { path } }));
      if (!json) note(`You left ${ref}.`);
    });
  orgs
    .command('audit <org>')
    .description("the organization's audit log, newest first, a page at a time (admin)")
    .option('--limit <n>', 'entries per page (1..200)', '50')
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .option('--all', 'every page (--json: one page holding them all)')
    .action(
      async (
        ref: string,
        opts: { limit: string; cursor?: string; all?: boolean },
        cmd: Command,
      ) => {
        const { fp, show } = context(cmd);
        const path = { org_id: await orgId(fp, ref) };
        const limit = positive(opts.limit, '--limit');
        const page = (cursor = opts.cursor) =>
          fp.api.GET('/v2/orgs/{org_id}/audit', { params: { path, query: { cursor, limit } } });
        // --json prints the page as the API answers it, so a script pages on with next_cursor.
        const answer = opts.all
          ? { data: await fp.all(page), next_cursor: null }
          : await fp.call(page());
        show(answer, (a) => {
          table(a.data.map(auditRow), ['at', 'action', 'actor', 'target']);
          if (a.next_cursor)
            note(
              paint(
                `More: frameplane orgs audit ${ref} --cursor ${a.next_cursor}`,
                'dim',
                process.stderr,
              ),
            );
        });
      },
    );
}
