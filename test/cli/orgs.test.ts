// `frameplane orgs` against a real service: create and list an org, invite by e-mail and accept
// the link, decline without a login, revoke and resend, change roles, page through the audit
// log, leave, remove, delete; the service's refusals with their codes and exit statuses.
import { describe, expect, it } from 'vitest';
import { invitationToken, newUser } from '../helpers/factories.ts';
import { addOrgMember, newOrg, newOrgProject } from '../helpers/orgs.ts';
import { configHome, expectProblem, run, runJson, userEnv } from './run.ts';
import { serviceForFile } from './service.ts';

const svc = serviceForFile();

// Each test starts some fifteen CLI processes (about half a second each): more than the default.
describe('orgs', { timeout: 60_000 }, () => {
  it('creates an org, invites, accepts, declines, revokes and changes roles', async () => {
    const { t, server } = svc;
    const [ann, bob] = [await newUser(t, 'ann'), await newUser(t, 'bob')];
    const env = userEnv(server, ann.token);
    const bobEnv = userEnv(server, bob.token);

    const org = await runJson(['orgs', 'create', 'Acme Inc'], env);
    expect(org).toMatchObject({ slug: 'acme-inc', role: 'owner', base_role: 'viewer' });
    const listed = await run(['orgs', 'list'], env);
    expect(listed.stdout).toMatch(/^ID\s+SLUG\s+NAME\s+ROLE\s+MEMBERS\s+BASE ROLE$/m);
    expect(listed.stdout).toMatch(
      new RegExp(`^${org.id}\\s+acme-inc\\s+Acme Inc\\s+owner\\s+1\\s+viewer$`, 'm'),
    );

    // Bob is invited as admin and accepts the link from his e-mail.
    expect(
      await runJson(['orgs', 'invite', 'acme-inc', bob.email, '--role', 'admin'], env),
    ).toMatchObject({
      email: bob.email,
      role: 'admin',
      status: 'pending',
    });
    const link = `http://frameplane.test/invitations/${await invitationToken(t, bob.email)}`;
    expect(await runJson(['orgs', 'accept', link], bobEnv)).toMatchObject({
      org_id: org.id,
      user_id: bob.id,
      role: 'admin',
    });

    // Carol declines with the link alone (no login); an invitation to Erin is revoked.
    const carol = await runJson(['orgs', 'invite', 'acme-inc', 'carol@example.test'], env);
    const resent = await runJson(['orgs', 'invitations', 'resend', 'acme-inc', carol.id], env);
    expect(resent).toMatchObject({ id: carol.id, status: 'pending' });
    const anonymous = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: server };
    const declined = await run(
      ['orgs', 'decline', await invitationToken(t, carol.email)],
      anonymous,
    );
    expect(declined.code, declined.stderr).toBe(0);
    const erin = await runJson(['orgs', 'invite', org.id, 'erin@example.test'], env);
    expect((await run(['orgs', 'invitations', 'revoke', 'acme-inc', erin.id], env)).code).toBe(0);
    const invitations = await runJson(['orgs', 'invitations', 'list', 'acme-inc'], env);
    expect(invitations.map((i: any) => [i.email, i.status])).toEqual([
      [bob.email, 'accepted'],
      ['carol@example.test', 'revoked'],
      ['erin@example.test', 'revoked'],
    ]);

    const members = await run(['orgs', 'members', 'list', 'acme-inc'], env);
    expect(members.stdout).toMatch(
      new RegExp(`^${bob.id}\\s+${bob.email}\\s+bob\\S*\\s+admin\\s`, 'm'),
    );
    const setRole = ['orgs', 'members', 'set-role', 'acme-inc', bob.email];
    expect(await runJson([...setRole, 'member'], env)).toMatchObject({ role: 'member' });
    const owner = await run([...setRole, 'owner'], env);
    expectProblem(owner, 5, 422, 'role_not_allowed');
    expect(owner.stderr).toContain('  role: must be member or admin'); // the field error too
  });

  it('renames, sets the base role, pages the audit log, leaves, removes and deletes', async () => {
    const { t, server } = svc;
    const [ann, bob, dave] = [
      await newUser(t, 'ann'),
      await newUser(t, 'bob'),
      await newUser(t, 'dave'),
    ];
    const env = userEnv(server, ann.token);
    const bobEnv = userEnv(server, bob.token);
    const org = await runJson(['orgs', 'create', 'Acme Inc', '--slug', 'acme-2'], env);
    await addOrgMember(t, org.id, bob, 'member');
    await addOrgMember(t, org.id, dave, 'member');
    for (const email of ['x@example.test', 'y@example.test', 'z@example.test']) {
      const r = await t.post(`/v2/orgs/${org.id}/invitations`, {
        token: ann.token,
        body: { email, role: 'member' },
      });
      expect(r.status, r.text).toBe(201);
    }

    const renamed = await runJson(['orgs', 'rename', 'acme-2', 'Acme', '--slug', 'acme'], env);
    expect(renamed).toMatchObject({ id: org.id, name: 'Acme', slug: 'acme' });
    expect(await runJson(['orgs', 'set-base-role', 'acme', 'member'], env)).toMatchObject({
      base_role: 'member',
    });
    const notAdmin = await run(['orgs', 'set-base-role', 'acme', 'admin'], bobEnv);
    expectProblem(notAdmin, 5, 403, 'insufficient_role');

    // The audit log, a page at a time: the cursor the first page prints fetches the next.
    const first = await run(['orgs', 'audit', 'acme', '--limit', '2'], env);
    expect(first.stdout).toMatch(/^AT\s+ACTION\s+ACTOR\s+TARGET$/m);
    expect(first.stdout.trim().split('\n')).toHaveLength(3);
    const cursor = /--cursor (\S+)$/m.exec(first.stderr)?.[1] ?? '';
    expect(cursor).not.toBe('');
    const second = await runJson(
      ['orgs', 'audit', 'acme', '--limit', '2', '--cursor', cursor],
      env,
    );
    expect(second.data).toHaveLength(2);
    const all = await runJson(['orgs', 'audit', 'acme', '--all', '--limit', '3'], env);
    expect(all.next_cursor).toBeNull();
    const actions = all.data.map((e: any) => e.action);
    expect(actions.at(-1)).toBe('org.created');
    expect(actions.filter((a: string) => a === 'invitation.created')).toHaveLength(3);
    expect(all.data.slice(2, 4)).toEqual(second.data);

    expect((await run(['orgs', 'members', 'remove', 'acme', dave.email], env)).code).toBe(0);
    expect((await run(['orgs', 'leave', 'acme'], bobEnv)).code).toBe(0);
    expect(
      (await runJson(['orgs', 'members', 'list', 'acme'], env)).map((m: any) => m.user_id),
    ).toEqual([ann.id]);
    expectProblem(await run(['orgs', 'leave', 'acme'], env), 5, 403, 'owner_immutable');

    // An org that owns a project stays; an empty one goes, with --yes.
    const busy = await newOrg(t, ann, { name: 'Busy' });
    await newOrgProject(t, ann, busy.id);
    expectProblem(await run(['orgs', 'delete', busy.slug, '--yes'], env), 5, 409, 'org_not_empty');
    expect((await run(['orgs', 'delete', 'acme'], env)).code).toBe(2);
    expect((await run(['orgs', 'delete', 'acme', '--yes'], env)).code).toBe(0);
    expectProblem(await run(['orgs', 'show', org.id], env), 4, 404, 'org_not_found');
    expect((await runJson(['orgs', 'list'], env)).map((o: any) => o.slug)).toEqual([busy.slug]);
  });
});
