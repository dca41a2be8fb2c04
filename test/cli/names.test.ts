// What a person reads names teams, projects and people; ids show with -v, and --json keeps the
// API's answer. Also declining a team invitation, with the link alone as with an org's.
import { describe, expect, it } from 'vitest';
import { invitationToken, newUser } from '../helpers/factories.ts';
import { newOrg, newOrgProject } from '../helpers/orgs.ts';
import { configHome, run, runJson, userEnv } from './run.ts';
import { serviceForFile } from './service.ts';

const svc = serviceForFile();

/** Runs `args`, expects exit 0 and answers stdout. */
async function human(args: string[], env: Record<string, string>) {
  const r = await run(args, env);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe('names where ids were', { timeout: 60_000 }, () => {
  it('share, grants and projects show name the team, project and owner', async () => {
    const { t, server } = svc;
    const ann = await newUser(t, 'ann');
    const env = userEnv(server, ann.token);
    const team = await runJson(['teams', 'create', 'Web Team'], env);
    await runJson(['projects', 'create', 'Shop'], env);
    const project = await runJson(['projects', 'create', 'Cart'], env);

    const shared = await human(['share', 'Shop', '--team', 'web-team'], env);
    expect(shared).toMatch(/^project: Shop$/m);
    expect(shared).toMatch(/^team:\s+Web Team$/m);
    expect(shared).not.toMatch(/prj_|team_|grt_/);
    // -v names the ids too; given as ids, the names are still found.
    const verbose = await human(
      ['share', project.id, '--team', team.id, '-v', '--role', 'admin'],
      env,
    );
    expect(verbose).toMatch(new RegExp(`^project: Cart \\(${project.id}\\)$`, 'm'));
    expect(verbose).toMatch(new RegExp(`^team:\\s+Web Team \\(${team.id}\\)$`, 'm'));
    expect(verbose).toMatch(/^grant:\s+grt_/m);

    const grants = await human(['grants', 'web-team'], env);
    expect(grants).toMatch(/^PROJECT\s+ROLE$/m);
    expect(grants).toMatch(/^Shop\s+viewer$/m);
    expect(grants).toMatch(/^Cart\s+admin$/m);
    expect(await human(['grants', 'web-team', '--verbose'], env)).toMatch(
      new RegExp(`^Cart \\(${project.id}\\)\\s+admin\\s+grt_\\S+$`, 'm'),
    );
    expect(await runJson(['grants', 'web-team'], env)).toContainEqual(
      expect.objectContaining({ project_id: project.id, team_id: team.id, role: 'admin' }),
    );

    const shown = await human(['projects', 'show', 'Shop'], env);
    expect(shown).toMatch(new RegExp(`^owner:\\s+ann <${ann.email}>$`, 'm'));
    expect(await human(['projects', 'show', 'Shop', '-v'], env)).toMatch(
      new RegExp(`^owner:\\s+ann <${ann.email}> \\(${ann.id}\\)$`, 'm'),
    );
    const org = await newOrg(t, ann, { name: 'Acme' });
    await newOrgProject(t, ann, org.id, 'Depot');
    expect(await human(['projects', 'show', 'Depot'], env)).toMatch(/^owner:\s+org Acme$/m);
    expect(await runJson(['projects', 'show', 'Depot'], env)).toMatchObject({
      owner_id: org.id,
      owner_kind: 'org',
    });
  });

  it('a missing frame or space is "not in" the project as it was named', async () => {
    const { t, server } = svc;
    const env = userEnv(server, (await newUser(t, 'cat')).token);
    await runJson(['projects', 'create', 'Shop'], env);
    const frame = await run(['frames', 'show', 'nope', '-p', 'Shop'], env);
    expect(frame.code).toBe(4);
    expect(frame.stderr).toBe('frameplane: no frame "nope" in project Shop\n');
    const space = await run(['spaces', 'show', 'nope', '-p', 'Shop'], env);
    expect(space.code).toBe(4);
    expect(space.stderr).toBe('frameplane: no space "nope" in project Shop\n');
  });
});

describe('team invitations', { timeout: 60_000 }, () => {
  it('accept names the team; decline needs only the link', async () => {
    const { t, server } = svc;
    const [ann, bob] = [await newUser(t, 'ann'), await newUser(t, 'bob')];
    const env = userEnv(server, ann.token);
    const team = await runJson(['teams', 'create', 'Ops Team'], env);

    await runJson(['invite', 'ops-team', bob.email], env);
    const link = `http://frameplane.test/invitations/${await invitationToken(t, bob.email)}`;
    const accepted = await human(['invitations', 'accept', link, '-v'], userEnv(server, bob.token));
    expect(accepted).toMatch(new RegExp(`^team:\\s+Ops Team \\(${team.id}\\)$`, 'm'));
    expect(accepted).toMatch(/^role:\s+member$/m);

    // Carol, not signed in, declines; the invitation shows as revoked (declined) to the admins.
    await runJson(['invite', 'ops-team', 'carol@example.test'], env);
    const anonymous = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: server };
    const token = await invitationToken(t, 'carol@example.test');
    const declined = await run(['invitations', 'decline', token], anonymous);
    expect(declined.code, declined.stderr).toBe(0);
    expect(declined.stderr).toBe('Invitation declined.\n');
    const list = await runJson(['invitations', 'list', 'ops-team'], env);
    expect(list.map((i: { email: string; status: string }) => [i.email, i.status])).toEqual([
      [bob.email, 'accepted'],
      ['carol@example.test', 'revoked'],
    ]);
    // A link used up: the service's refusal, not a second decline.
    const again = await run(['invitations', 'decline', token], anonymous);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/\(404 invitation_not_found\)$/m);
  });
});

describe('invitations to you, answered by id', { timeout: 60_000 }, () => {
  it('pending lists them by team name; accept and decline take an id from it', async () => {
    const { t, server } = svc;
    const [ann, dan] = [await newUser(t, 'ann'), await newUser(t, 'dan')];
    const env = userEnv(server, ann.token);
    await runJson(['teams', 'create', 'Blue Team'], env);
    await runJson(['teams', 'create', 'Red Team'], env);
    await runJson(['invite', 'blue-team', dan.email, '--role', 'viewer'], env);
    await runJson(['invite', 'red-team', dan.email], env);
    const danEnv = userEnv(server, dan.token);
    // The API lists invitations only to a proven address (the e-mailed link proves it).
    await t.db
      .updateTable('users')
      .set({ email_verified_at: t.clock.now() })
      .where('id', '=', dan.id)
      .execute();

    const listed = await human(['invitations', 'pending'], danEnv);
    expect(listed).toMatch(/^ID\s+TO\s+ROLE\s+EXPIRES$/m);
    expect(listed).toMatch(/^inv_\w{26}\s+Blue Team\s+viewer\s/m);
    const mine = await runJson(['invitations', 'pending'], danEnv);
    const id = (name: string) =>
      mine.find((i: { team: { name: string } }) => i.team.name === name).id as string;

    const joined = await human(['invitations', 'accept', id('Blue Team')], danEnv);
    expect(joined).toMatch(/^joined:\s+Blue Team$/m);
    expect(joined).toMatch(/^role:\s+viewer$/m);
    const declined = await run(['invitations', 'decline', id('Red Team')], danEnv);
    expect(declined.code, declined.stderr).toBe(0);
    expect(declined.stderr).toBe('Declined the invitation to Red Team.\n');
    expect((await runJson(['teams', 'list'], danEnv)).map((x: { name: string }) => x.name)).toEqual(
      ['Blue Team'],
    );
    const none = await run(['invitations', 'pending'], danEnv);
    expect(none.stderr).toBe('No invitations are waiting for you.\n');
    const gone = await run(['invitations', 'accept', id('Red Team')], danEnv);
    expect(gone.code).toBe(4);
    expect(gone.stderr).toMatch(/No invitation inv_\w+ is waiting for you/);
  });
});
