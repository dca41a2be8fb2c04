// signup: an account from the command line, then the same saved session as `login`. The API
// e-mails a link that proves the address (docs/api.md, "Proof of e-mail ownership"); this says
// what to do with it, since until then the account sees no invitations.
import type { Command } from 'commander';
import { createFrameplane } from '../sdk/index.ts';
import { type LoginOptions, saveLogin } from './auth.ts';
import { serverOf } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { note, printJson } from './output.ts';
import { ask, readStdin } from './prompt.ts';
import { invitationToken } from './resolve.ts';

interface SignupOptions extends LoginOptions {
  name?: string;
  invitation?: string;
}

/** The password, typed twice on a terminal (a typo would lock the new account), or stdin. */
async function newPassword(opts: SignupOptions): Promise<string> {
  if (opts.passwordStdin) return readStdin();
  const password = await ask('Password: ', true);
  if ((await ask('Password again: ', true)) !== password)
    throw new CliError('the two passwords differ: nothing was created', EXIT.usage);
  return password;
}

async function signup(opts: SignupOptions) {
  const server = serverOf(opts);
  if (!server) throw new CliError('--server (or FRAMEPLANE_SERVER) is required', EXIT.usage);
  if ((!opts.email || !opts.passwordStdin) && process.stdin.isTTY !== true)
    throw new CliError('without a terminal, give --email and --password-stdin', EXIT.usage);
  const email = opts.email ?? (await ask('E-mail: '));
  const password = await newPassword(opts);
  const invitation_token = opts.invitation && invitationToken(opts.invitation);
  const fp = createFrameplane({ server });
  const answer = await fp.call(
    fp.api.POST('/v2/auth/signup', {
      body: { email, password, name: opts.name, invitation_token },
    }),
  );
  if (!('access_token' in answer)) {
    // 202: the account comes into being only when the e-mailed link is followed.
    if (opts.json) return printJson({ server, ...answer });
    return note(
      `Almost done: a link went to ${answer.email} (it works until ${answer.expires_at}).\n` +
        'Open it and enter the password you just chose: that creates the account. Then ' +
        `\`frameplane login --email ${answer.email}\`.`,
    );
  }
  const { user, access_token: token } = answer;
  saveLogin({ server, token, kind: 'session', email: user.email }, user, opts.json);
  if (opts.json) return;
  if (user.email_verified) note('Your address is verified (the invitation proved it).');
  else
    note(
      `To verify ${user.email}: open the link e-mailed to it and enter this password. Until ` +
        'then you see no invitations sent to that address; everything else works now. ' +
        `No e-mail, or the link expired? The console sends another: ${server}/console/`,
    );
}

export function register(program: Command) {
  program
    .command('signup')
    .description('create an account and log in to it (the password is asked, or read from stdin)')
    .option('--email <email>', 'your e-mail address (asked when absent)')
    .option('--name <name>', 'your name (default: the part of the address before @)')
    .option('--password-stdin', 'read the password from stdin (for scripts)')
    .option('--invitation <link>', 'the link of an invitation e-mailed to you: no link to follow')
    .action(async (_opts, cmd: Command) => signup(cmd.optsWithGlobals<SignupOptions>()));
}
