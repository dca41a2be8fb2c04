// frameplane open <frame>: the frame's URL in the browser, by the platform's opener (xdg-open,
// open, start) or by $BROWSER, which xdg-open and Python's webbrowser honour too. The URL is
// printed instead with --print, and when there is no browser to open it in (a session over SSH,
// an opener that fails), so that the person can still follow it.
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { noUrl } from './address.ts';
import { context, projectOption } from './context.ts';
import { CliError, EXIT } from './exit-codes.ts';
import { note } from './output.ts';
import { frame as findFrame } from './resolve.ts';

type Opener = { command: string; args: string[] };

/**
 * Only plain http(s) addresses go to an opener: `start` is a command of cmd.exe, which would
 * read `&`, `%` or `"` in an address as its own syntax. A frame's URL is an origin anyway.
 */
const openable = (url: string) => /^https?:\/\/[\w.\-:[\]/]+$/.test(url);

/** How to open `url` here; undefined when this machine has no browser to show it. */
export function opener(
  url: string,
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env,
): Opener | undefined {
  if (!openable(url)) return undefined;
  // $BROWSER is a list of commands (the first is used); `%s` marks where the URL goes.
  const browser = env.BROWSER?.split(':')[0]?.trim();
  if (browser) {
    const [command = '', ...args] = browser.split(/\s+/);
    const placed = args.some((a) => a.includes('%s'));
    return {
      command,
      args: placed ? args.map((a) => a.replaceAll('%s', url)) : [...args, url],
    };
  }
  if (platform === 'darwin') return { command: 'open', args: [url] };
  if (platform === 'win32') return { command: 'cmd.exe', args: ['/d', '/c', 'start', '""', url] };
  // xdg-open without a graphical session would start a text browser in this terminal, if any.
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return undefined;
  return { command: 'xdg-open', args: [url] };
}

/**
 * Starts the opener; false when it cannot run or fails at once (xdg-open with no browser for
 * http exits 3). A browser started directly may run until it is closed: still running after a
 * second, it is taken as opened and left running.
 */
function launch({ command, args }: Opener): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      detached: true,
      stdio: 'ignore',
      // cmd.exe parses its own command line: `start ""` must reach it as written.
      windowsVerbatimArguments: command === 'cmd.exe',
    });
    const timer = setTimeout(() => {
      child.unref();
      resolve(true);
    }, 1000);
    const end = (opened: boolean) => {
      clearTimeout(timer);
      resolve(opened);
    };
    child.on('error', () => end(false));
    child.on('exit', (code) => end(code === 0));
  });
}

export function register(program: Command) {
  program
    .command('open <frame>')
    .description("open the frame's URL in the browser (--print: print it)")
    .requiredOption(...projectOption)
    .option('--print', 'print the URL instead of opening it')
    .addHelpText('after', '\nWith --json: prints the frame, opens nothing. No URL: exit 5.')
    .action(async (ref: string, opts: { project: string; print?: boolean }, cmd: Command) => {
      const ctx = context(cmd);
      const f = await findFrame(ctx.fp, opts.project, ref);
      if (!f.url) throw new CliError(noUrl(f), EXIT.refused);
      if (ctx.json) return ctx.show(f, () => {});
      const how = opts.print ? undefined : opener(f.url);
      if (how) {
        note(`Opening ${f.url}`);
        if (await launch(how)) return;
        note(`${how.command} could not open it; the URL:`);
      } else if (!opts.print) {
        note('No browser to open it in here; the URL:');
      }
      process.stdout.write(`${f.url}\n`);
    });
}
