// The CLI as a user's shell runs it, against a real service on a real socket: log in, create a
// team, invite, accept the link from the e-mail, share a project, read `access`; --json parses;
// exit codes as documented.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOn, testApp, type TestApp } from '../helpers/app.ts';
import { FACTORY_PASSWORD, newUser } from '../helpers/factories.ts';
import { configHome, run } from './run.ts';

let t: TestApp;
let server: string;
beforeAll(async () => {
  t = await testApp();
  server = await listenOn(t);
});
afterAll(() => t.close());

/** The invitation link in the newest e-mail to `email`, as the invitee would copy it. */
async function invitationLink(email: string): Promise<string> {
  const mail = await t.db
    .selectFrom('emails')
    .selectAll()
    .where('to_address', '=', email.toLowerCase())
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  const link = /https?:\/\/\S+\/invitations\/\S+/.exec(t.core.sealer.open(mail.sealed_text))?.[0];
  if (!link) throw new Error(`no invitation link in the e-mail to ${email}`);
  return link;
}

describe('a scripted session', () => {
  it('logs in, creates a team, invites, accepts, shares and shows who has access', async () => {
    const ann = await newUser(t, 'ann');
    const bob = await newUser(t, 'bob');
    const annEnv = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: server };
    const bobEnv = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: server };
    const cli = (args: string[], env = annEnv, input?: string) => run(args, env, input);
    const json = async (args: string[], env = annEnv) => {
      const r = await cli([...args, '--json'], env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };

    // Ann logs in with a personal token; the file is hers alone.
    const login = await cli(['login', '--token', ann.token]);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(ann.email);
    const file = join(annEnv.XDG_CONFIG_HOME, 'frameplane', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ server, token: ann.token });
    expect(await json(['whoami'])).toMatchObject({ id: ann.id, email: ann.email });

    // Bob logs in with e-mail and password (a session), the password on stdin.
    const bobLogin = await cli(
      ['login', '--email', bob.email, '--password-stdin'],
      bobEnv,
      `${FACTORY_PASSWORD}\n`,
    );
    expect(bobLogin.code, bobLogin.stderr).toBe(0);

    const team = await json(['teams', 'create', 'Web Team']);
    expect(team).toMatchObject({ name: 'Web Team', slug: 'web-team', role: 'owner' });
    const invited = await json(['invite', 'web-team', bob.email, '--role', 'member']);
    expect(invited).toMatchObject({ email: bob.email, role: 'member', status: 'pending' });

    const link = await invitationLink(bob.email);
    const joined = await json(['invitations', 'accept', link], bobEnv);
    expect(joined).toMatchObject({ team_id: team.id, user_id: bob.id, role: 'member' });
    const members = await json(['members', 'list', 'web-team']);
    expect(members.map((m: any) => m.email).sort()).toEqual([ann.email, bob.email].sort());

    const project = await json(['projects', 'create', 'Shop']);
    expect(await json(['projects', 'list'], bobEnv)).toEqual([]);
    const grant = await json(['share', 'Shop', '--team', 'web-team', '--role', 'viewer']);
    expect(grant).toMatchObject({ project_id: project.id, team_id: team.id, role: 'viewer' });
    expect(await json(['projects', 'list'], bobEnv)).toMatchObject([
      { id: project.id, role: 'viewer' },
    ]);
    expect(await json(['grants', 'web-team'])).toMatchObject([{ project_id: project.id }]);

    const access = await json(['access', project.id]);
    const bobAccess = access.members.find((m: any) => m.user_id === bob.id);
    expect(bobAccess).toMatchObject({ role: 'viewer', via: [{ kind: 'team', team_id: team.id }] });
    const table = await cli(['access', 'Shop']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^EMAIL\s+NAME\s+ROLE\s+VIA$/m);
    expect(table.stdout).toContain(`${bob.email}`);
    expect(table.stdout).toContain('team web-team (member, grant viewer)');
    expect(table.stdout).not.toContain('\x1b['); // not a terminal: no colour

    const unshare = await cli(['unshare', 'Shop', '--team', 'web-team']);
    expect(unshare.code, unshare.stderr).toBe(0);
    expect(await json(['projects', 'list'], bobEnv)).toEqual([]);

    // Logging out forgets a pasted token but leaves it valid; a session is ended.
    const bobToken = JSON.parse(
      readFileSync(join(bobEnv.XDG_CONFIG_HOME, 'frameplane', 'config.json'), 'utf8'),
    ).token;
    expect((await cli(['logout'])).code).toBe(0);
    expect((await cli(['logout'], bobEnv)).code).toBe(0);
    expect((await cli(['whoami'])).code).toBe(3);
    expect((await t.get('/v2/user', { token: ann.token })).status).toBe(200);
    expect((await t.get('/v2/user', { token: bobToken })).status).toBe(401);
  });
});

describe('exit codes and errors', () => {
  it('says what went wrong on stderr and exits with the documented code', async () => {
    const ann = await newUser(t, 'ann');
    const env = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: server };
    const withToken = { ...env, FRAMEPLANE_TOKEN: ann.token };

    const notLoggedIn = await run(['projects', 'list'], env);
    expect(notLoggedIn.code).toBe(3);
    expect(notLoggedIn.stderr).toContain('Not logged in');
    expect((await run(['whoami'], { ...env, FRAMEPLANE_TOKEN: 'fp_wrong' })).code).toBe(3);
    expect((await run(['projects', 'list', '--bogus'], withToken)).code).toBe(2);
    expect((await run(['teams'], withToken)).code).toBe(2);

    const missing = await run(['projects', 'show', 'prj_0nothere'], withToken);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^frameplane: .+ \(404 project_not_found\)$/m);
    expect(missing.stdout).toBe('');

    const invalid = await run(['teams', 'create', 'x', '--slug', 'Not A Slug'], withToken);
    expect(invalid.code).toBe(5);
    expect(invalid.stderr).toContain('slug');

    const unreachable = await run(['whoami'], {
      ...withToken,
      FRAMEPLANE_SERVER: 'http://127.0.0.1:1',
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot reach the server http://127.0.0.1:1');

    const help = await run(['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('agent');
    const version = await run(['--version'], env);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('keeps `frameplane agent` as it was: its own help and checks', async () => {
    const help = await run(['agent', '--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: frameplane agent --server URL --token TOKEN/);
    const bad = await run(['agent', '--nope'], {});
    expect(bad.code).toBe(2);
  });
});
