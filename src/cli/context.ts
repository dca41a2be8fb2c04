// What every command needs: the service and token (option, then environment, then the stored
// login), a client of the SDK, and whether the caller wants JSON.
import type { Command } from 'commander';
import { createFrameplane, type Frameplane } from '../sdk/index.ts';
import { readLogin } from './config.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { printJson } from './output.ts';

export interface GlobalOptions {
  server?: string;
  token?: string;
  json?: boolean;
  verbose?: boolean;
}

export interface Context {
  fp: Frameplane;
  server: string;
  json: boolean;
  /** -v: ids beside the names of what a line refers to. */
  verbose: boolean;
  /** Prints `value` as JSON with --json, else runs `human`. */
  show<T>(value: T, human: (value: T) => void): void;
}

/** What a refused token means to the person at the terminal (report.ts). */
export const NOT_LOGGED_IN = 'Not logged in (or the session expired): run `frameplane login`';

export function serverOf(opts: GlobalOptions): string | undefined {
  const server = opts.server ?? process.env.FRAMEPLANE_SERVER ?? readLogin()?.server;
  if (server === undefined) return undefined;
  try {
    new URL(server);
  } catch {
    throw new CliError(`--server must be a URL, got "${server}"`, EXIT.usage);
  }
  return server.replace(/\/+$/, '');
}

/**
 * The context of a command that needs a logged-in user; with `anonymous`, of one that also works
 * without a login (declining an invitation: the token in its link suffices).
 */
export function context(command: Command, anonymous = false): Context {
  const opts = command.optsWithGlobals<GlobalOptions>();
  const stored = readLogin();
  const server = serverOf(opts);
  const token = opts.token ?? process.env.FRAMEPLANE_TOKEN ?? stored?.token;
  if (!server || (!token && !anonymous)) {
    const where = server ? '' : ' --server URL';
    throw new CliError(
      `Not logged in: run \`frameplane login${where}\` (a new account: \`frameplane signup${where}\`; ` +
        `scripts set ${server ? '' : 'FRAMEPLANE_SERVER and '}FRAMEPLANE_TOKEN)`,
      EXIT.auth,
    );
  }
  const json = opts.json === true;
  return {
    fp: createFrameplane({ server, token }),
    server,
    json,
    verbose: opts.verbose === true,
    show(value, human) {
      if (json) printJson(value);
      else human(value);
    },
  };
}

/**
 * The option that names a frame's or space's project: `.requiredOption(...projectOption)`.
 * When it is left out, the project linked to the directory is used (link.ts).
 */
export const projectOption = [
  '-p, --project <project>',
  'the project (id or name; default: the linked one, see frameplane link)',
] as const;

/** A command group registered earlier (teams, frames…), to add commands to it from another file. */
export function group(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name);
  if (!found) throw new Error(`register the ${name} group first`);
  return found;
}
