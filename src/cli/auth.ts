// login, logout, whoami.
import type { Command } from 'commander';
import { createFrameplane, FrameplaneError, type Schemas } from '../sdk/index.ts';
import { forgetLogin, readLogin, writeLogin, configPath, type StoredLogin } from './config.ts';
import { context, serverOf, type GlobalOptions } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { details, note, printJson } from './output.ts';
import { ask, readStdin } from './prompt.ts';

export interface LoginOptions extends GlobalOptions {
  email?: string;
  passwordStdin?: boolean;
}

async function login(opts: LoginOptions) {
  const server = serverOf(opts);
  if (!server) throw new CliError('--server (or FRAMEPLANE_SERVER) is required', EXIT.usage);
  let token = opts.token ?? process.env.FRAMEPLANE_TOKEN;
  let kind: StoredLogin['kind'] = 'token';
  if (!token) {
    const interactive = process.stdin.isTTY === true;
    if (!opts.email && !interactive)
      throw new CliError('give --token, FRAMEPLANE_TOKEN, or --email with --password-stdin', 2);
    const email = opts.email ?? (await ask('E-mail: '));
    const password = opts.passwordStdin ? await readStdin() : await ask('Password: ', true);
    const anonymous = createFrameplane({ server });
    const session = await anonymous
      .call(anonymous.api.POST('/v2/auth/login', { body: { email, password } }))
      .catch(refused('No account yet? `frameplane signup`'));
    token = session.access_token;
    kind = 'session';
  }
  const fp = createFrameplane({ server, token });
  const me = await fp
    .call(fp.api.GET('/v2/user'))
    .catch(refused('The token is unknown, expired or revoked.'));
  saveLogin({ server, token, kind, email: me.email }, me, opts.json);
}

/** A 401 of `login` in the user's words (not "not logged in": they are logging in). */
const refused = (hint: string) => (err: unknown) => {
  if (err instanceof FrameplaneError && err.status === 401)
    throw new CliError(
      err.code === 'invalid_credentials' ? `${err.detail} ${hint}` : hint,
      EXIT.auth,
    );
  throw err;
};

/** Keeps the login (a session from `login` or `signup`) and says so. */
export function saveLogin(login: StoredLogin, user: Schemas['User'], json?: boolean) {
  writeLogin(login);
  if (json) printJson({ server: login.server, user, config: configPath() });
  else note(`Logged in to ${login.server} as ${user.email} (saved in ${configPath()})`);
}

export function register(program: Command) {
  program
    .command('login')
    .description('log in and keep the token in your config directory (mode 0600)')
    .option('--email <email>', 'log in with e-mail and password (a session)')
    .option('--password-stdin', 'read the password from stdin (for scripts)')
    .addHelpText(
      'after',
      '\nWith --token (or FRAMEPLANE_TOKEN) the personal token is checked and stored as is.',
    )
    .action(async (_opts, cmd: Command) => login(cmd.optsWithGlobals<LoginOptions>()));

  program
    .command('logout')
    .description('forget the stored login (and end it on the service if it was a session)')
    .action(async (_opts, cmd: Command) => {
      const stored = readLogin();
      if (!stored) return note('Not logged in.');
      // A personal token pasted into `login` may serve other scripts: only forget it here.
      if (stored.kind === 'session') {
        const fp = createFrameplane({ server: stored.server, token: stored.token });
        await fp.call(fp.api.POST('/v2/auth/logout')).catch(() => {}); // already expired: fine
      }
      forgetLogin();
      if (!cmd.optsWithGlobals<GlobalOptions>().json) note(`Logged out of ${stored.server}.`);
    });

  program
    .command('whoami')
    .description('the user the token belongs to')
    .action(async (_opts, cmd: Command) => {
      const ctx = context(cmd);
      const me = await ctx.fp.call(ctx.fp.api.GET('/v2/user'));
      ctx.show(me, (u) => details({ email: u.email, name: u.name, id: u.id, server: ctx.server }));
    });
}
