// What a new user meets first (issue 38): `signup` and what it says about proving the address,
// a wrong password pointing to signup, a refused token and an unreachable server in the user's
// words, and `help exit-codes` (the installed package has no README).
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_MEANING } from '../../src/cli/exit-codes.ts';
import { unreachableReason } from '../../src/cli/report.ts';
import { FACTORY_PASSWORD, newTeam, newUser } from '../helpers/factories.ts';
import { configHome, run, runJson, userEnv } from './run.ts';
import { serviceForFile } from './service.ts';

const s = serviceForFile();
const PASSWORD = 'a long enough password';
const unique = () => Math.random().toString(36).slice(2, 10);

/** The newest e-mail to `email`, as its reader sees it. */
async function newestMail(email: string): Promise<string> {
  const mail = await s.t.db
    .selectFrom('emails')
    .selectAll()
    .where('to_address', '=', email.toLowerCase())
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow();
  return s.t.core.sealer.open(mail.sealed_text);
}

const loginFile = (env: { XDG_CONFIG_HOME: string }) =>
  join(env.XDG_CONFIG_HOME, 'frameplane', 'config.json');

describe('signup', () => {
  it('creates the account, logs in, and says how to verify the address', async () => {
    const email = `new.${unique()}@example.test`;
    const env = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: s.server };
    const r = await run(['signup', '--email', email, '--password-stdin'], env, `${PASSWORD}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Logged in to ${s.server} as ${email}`);
    expect(r.stderr).toContain(`To verify ${email}: open the link e-mailed to it`);
    expect(r.stderr).toContain(`${s.server}/console/`);
    expect(JSON.parse(readFileSync(loginFile(env), 'utf8'))).toMatchObject({
      server: s.server,
      kind: 'session',
      email,
    });
    expect(await runJson(['whoami'], env)).toMatchObject({ email, email_verified: false });
    // The link the message speaks of is in the mailbox.
    expect(await newestMail(email)).toContain('/verify-email#token=');
  });

  it('answers a sign-up that waits for the link (202) without a session', async () => {
    const email = `twice.${unique()}@example.test`;
    const first = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: s.server };
    const args = ['signup', '--email', email, '--password-stdin'];
    expect((await run(args, first, PASSWORD)).code).toBe(0);
    // The address is held by an account that never proved it: no account until the link.
    const second = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: s.server };
    const r = await run(args, second, PASSWORD);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`a link went to ${email}`);
    expect(r.stderr).toContain(`frameplane login --email ${email}`);
    expect(existsSync(loginFile(second))).toBe(false);
  });

  it('signs up with an invitation link: verified at once', async () => {
    const ann = await newUser(s.t, 'ann');
    const team = await newTeam(s.t, ann);
    const email = `invited.${unique()}@example.test`;
    await runJson(['invite', team.slug, email], userEnv(s.server, ann.token));
    const link = /https?:\/\/\S+\/invitations\/\S+/.exec(await newestMail(email))?.[0] ?? '';
    const env = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: s.server };
    const args = ['signup', '--email', email, '--invitation', link, '--password-stdin'];
    const r = await run(args, env, PASSWORD);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Your address is verified');
    expect(await runJson(['whoami'], env)).toMatchObject({ email, email_verified: true });
  });

  it('refuses a short password, and a password neither typed nor on stdin', async () => {
    const env = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: s.server };
    const email = `short.${unique()}@example.test`;
    const short = await run(['signup', '--email', email, '--password-stdin'], env, 'short');
    expect(short.code).toBe(EXIT.refused);
    expect(short.stderr).toMatch(/password/);
    const noTerminal = await run(['signup', '--email', email], env);
    expect(noTerminal.code).toBe(EXIT.usage);
    expect(noTerminal.stderr).toContain('--password-stdin');
  });
});

describe('errors in the user’s words', () => {
  it('points a wrong password to signup', async () => {
    const bob = await newUser(s.t, 'bob');
    const env = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: s.server };
    const args = ['login', '--email', bob.email, '--password-stdin'];
    const wrong = await run(args, env, 'not the password');
    expect(wrong.code).toBe(EXIT.auth);
    expect(wrong.stderr).toContain('The e-mail or the password is wrong.');
    expect(wrong.stderr).toContain('No account yet? `frameplane signup`');
    expect((await run(args, env, FACTORY_PASSWORD)).code).toBe(0);
  });

  it('says "not logged in" for a missing, refused or ended token, not API words', async () => {
    const env = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_SERVER: s.server };
    const missing = await run(['projects', 'list'], env);
    expect(missing.code).toBe(EXIT.auth);
    expect(missing.stderr).toContain('Not logged in: run `frameplane login`');

    const refused = await run(['projects', 'list'], { ...env, FRAMEPLANE_TOKEN: 'fp_wrong' });
    expect(refused.code).toBe(EXIT.auth);
    expect(refused.stderr).toBe(
      'frameplane: Not logged in (or the session expired): run `frameplane login` ' +
        '(the token in FRAMEPLANE_TOKEN was refused).\n',
    );

    const bob = await newUser(s.t, 'bob');
    const args = ['login', '--email', bob.email, '--password-stdin'];
    expect((await run(args, env, FACTORY_PASSWORD)).code).toBe(0);
    const session = JSON.parse(readFileSync(loginFile(env), 'utf8')).token;
    expect((await s.t.post('/v2/auth/logout', { token: session })).status).toBe(204);
    const ended = await run(['whoami'], env);
    expect(ended.code).toBe(EXIT.auth);
    expect(ended.stderr).toBe(
      'frameplane: Not logged in (or the session expired): run `frameplane login`.\n',
    );
    expect(ended.stderr).not.toContain('Bearer');
  });

  it('names the server it could not reach, why, and how to choose another', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as import('node:net').AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const env = { XDG_CONFIG_HOME: configHome(), FRAMEPLANE_TOKEN: 'fp_any' };

    const refused = await run(['whoami'], {
      ...env,
      FRAMEPLANE_SERVER: `http://127.0.0.1:${port}`,
    });
    expect(refused.code).toBe(EXIT.failure);
    expect(refused.stderr).toContain(
      `cannot reach the server http://127.0.0.1:${port}: nothing is listening there (ECONNREFUSED)`,
    );
    expect(refused.stderr).toContain('That server comes from FRAMEPLANE_SERVER.');
    expect(refused.stderr).toContain('--server URL or FRAMEPLANE_SERVER=URL');

    const unknown = await run(['whoami', '--server', 'http://frameplane.invalid'], env);
    expect(unknown.code).toBe(EXIT.failure);
    expect(unknown.stderr).toContain('cannot reach the server http://frameplane.invalid:');
    // Offline, the lookup fails before the name is known to be missing.
    expect(unknown.stderr).toMatch(/the host is unknown \(ENOTFOUND\)|could not be looked up/);
    expect(unknown.stderr).toContain('That server comes from --server.');
  });

  it('words a timeout and a refused certificate from the code under "fetch failed"', () => {
    const failed = (code: string) =>
      new TypeError('fetch failed', { cause: Object.assign(new Error('x'), { code }) });
    expect(unreachableReason(failed('UND_ERR_CONNECT_TIMEOUT'))).toMatch(/^the connection timed/);
    expect(unreachableReason(failed('ETIMEDOUT'))).toMatch(/^the connection timed out/);
    expect(unreachableReason(failed('DEPTH_ZERO_SELF_SIGNED_CERT'))).toContain('TLS certificate');
    const both = new AggregateError([failed('ECONNREFUSED').cause], 'connect');
    expect(unreachableReason(new TypeError('fetch failed', { cause: both }))).toMatch(
      /^nothing is listening there/,
    );
  });
});

describe('help exit-codes', () => {
  it('prints the exit codes, which the README copies; --help points to it', async () => {
    const r = await run(['help', 'exit-codes'], {});
    expect(r.code).toBe(0);
    const rows = Object.entries(EXIT).map(([name, code]) => {
      const meaning = EXIT_MEANING[name as keyof typeof EXIT];
      return { code, meaning, readme: `| ${code} | ${meaning} |` };
    });
    for (const { code, meaning } of rows)
      expect(r.stdout).toContain(`  ${code}  ${meaning.replace(/`/g, '')}\n`);
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const { readme: line } of rows) expect(readme).toContain(line);

    const help = await run(['--help'], {});
    expect(help.stdout).toContain('Exit codes: frameplane help exit-codes.');
    const logsHelp = await run(['help', 'frames', 'logs'], {});
    expect(logsHelp.stdout).toMatch(/^Usage: frameplane frames logs \[options\] \[frame\]/);
    const nothing = await run(['help', 'nothing'], {});
    expect(nothing.code).toBe(EXIT.usage);
  });
});
