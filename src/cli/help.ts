// frameplane help [command…] | help exit-codes. Commander's own help command knows commands
// only; the exit codes are a topic of their own, because the installed package has no README
// to point to.
import type { Command } from 'commander';
import { CliError, EXIT, exitCodesText } from './exit-codes.ts';

export function register(program: Command) {
  program
    .command('help [topic...]')
    .description('help on a command (help frames logs), or on the exit codes (help exit-codes)')
    .action((topic: string[]) => {
      if (topic.join(' ') === 'exit-codes') {
        process.stdout.write(exitCodesText());
        return;
      }
      let command = program;
      for (const word of topic) {
        const next = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
        if (!next)
          throw new CliError(`no help on "${topic.join(' ')}": see frameplane --help`, EXIT.usage);
        command = next;
      }
      command.outputHelp();
    });
}
