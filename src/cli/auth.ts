// login, logout, whoami.
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { createFrameplane } from '../sdk/index.ts';
import { forgetLogin, readLogin, writeLogin, configPath, type StoredLogin } from './config.ts';
import { context, serverOf, type GlobalOptions } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { details, note, printJson } from './output.ts';

/** Reads all of stdin (for --password-stdin), without the final line break. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Asks on the terminal; with `hidden`, what is typed is not echoed. */
function ask(question: string, hidden = false): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  if (hidden) {
    const write = (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput;
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) =>
      write.call(rl, s.startsWith(question) ? question : '');
  }
  return new Promise((resolve) =>
    rl.question(question, (answer) => {
      rl.close();
      if (hidden) process.stderr.write('\n');
      resolve(answer);
    }),
  );
}

interface LoginOptions extends GlobalOptions {
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
    const session = await anonymous.call(
      anonymous.api.POST('/v2/auth/login', { body: { email, password } }),
    );
    token = session.access_token;
    kind = 'session';
  }
  const fp = createFrameplane({ server, token });
  const me = await fp.call(fp.api.GET('/v2/user'));
  writeLogin({ server, token, kind, email: me.email });
  if (opts.json) printJson({ server, user: me, config: configPath() });
  else note(`Logged in to ${server} as ${me.email} (saved in ${configPath()})`);
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
