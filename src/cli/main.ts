// `frameplane`: the command line of the service, on the SDK (src/sdk). One file per command
// group registers its commands here; `frameplane agent` stays src/runner/cli.ts (entry.ts routes
// it there before this file loads, so its options and help are exactly as before).
import { Command, CommanderError, Option } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import * as auth from './auth.ts';
import * as completeNames from './complete-names.ts';
import * as completion from './completion.ts';
import type { GlobalOptions } from './context.ts';
import { EXIT, exitCodeOf } from './exit-codes.ts';
import * as frameDomains from './frame-domains.ts';
import * as frameHistory from './frame-history.ts';
import * as frameMetrics from './frame-metrics.ts';
import * as framePreviews from './frame-previews.ts';
import * as frameReleases from './frame-releases.ts';
import * as frameSettings from './frame-settings.ts';
import * as frameVolumes from './frame-volumes.ts';
import * as frames from './frames.ts';
import * as help from './help.ts';
import * as link from './link.ts';
import * as notifications from './notifications.ts';
import * as open from './open.ts';
import * as orgMembers from './org-members.ts';
import * as orgs from './orgs.ts';
import * as projectWebhook from './project-webhook.ts';
import * as projects from './projects.ts';
import { report } from './report.ts';
import * as signup from './signup.ts';
import * as spaces from './spaces.ts';
import * as teamAdmin from './team-admin.ts';
import * as teams from './teams.ts';
import * as tokens from './tokens.ts';

export function program(): Command {
  const cli = new Command('frameplane')
    .description('Frameplane on the command line: teams, orgs, projects, sharing and frames.')
    .version(pkg.version, '-V, --version')
    .addOption(new Option('--server <url>', 'the service').env('FRAMEPLANE_SERVER'))
    .addOption(
      new Option('--token <token>', 'a personal token (prefer FRAMEPLANE_TOKEN: ps shows args)'),
    )
    .option('--json', 'print JSON for scripts instead of tables')
    .option('-v, --verbose', 'show ids beside the names of teams, projects and people')
    .exitOverride()
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      '\nThe login is kept in $XDG_CONFIG_HOME/frameplane/config.json. -p and a frame left out ' +
        "come from the directory's link (frameplane link). Exit codes: frameplane help exit-codes.",
    );
  auth.register(cli);
  signup.register(cli);
  link.register(cli);
  tokens.register(cli);
  teams.register(cli);
  teamAdmin.register(cli);
  orgs.register(cli);
  orgMembers.register(cli);
  projects.register(cli);
  projectWebhook.register(cli);
  notifications.register(cli);
  spaces.register(cli);
  frames.register(cli);
  frameSettings.register(cli);
  frameHistory.register(cli);
  frameReleases.register(cli);
  frameDomains.register(cli);
  frameVolumes.register(cli);
  framePreviews.register(cli);
  frameMetrics.register(cli);
  open.register(cli);
  cli
    .command('agent')
    .description('run frames on this machine (frameplane agent --help)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async () => {
      await import('../runner/cli.ts');
    });
  completion.register(cli);
  help.register(cli);
  completeNames.register(cli);
  // Last: it reads the options and arguments of every command registered above.
  link.fallBackToLink(cli);
  return cli;
}

export async function main(argv: string[]) {
  const cli = program();
  if (argv.length === 0) {
    cli.outputHelp();
    return;
  }
  try {
    await cli.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed its message (or the help) already.
      const shown = ['commander.helpDisplayed', 'commander.version'];
      process.exitCode = shown.includes(err.code) ? EXIT.ok : EXIT.usage;
      return;
    }
    report(err, cli.opts<GlobalOptions>());
    process.exitCode = exitCodeOf(err);
  }
}

await main(process.argv.slice(2));
