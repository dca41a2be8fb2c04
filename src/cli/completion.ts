// frameplane completion bash|zsh|fish: a script that completes commands, subcommands and options.
// Commander has no completion of its own, so the script is generated from its command tree: a
// table from each command path ("frames env") to the words that may follow it, and one small
// function per shell that walks the typed words through that table. Every shell gets the same
// table, so a new command completes everywhere without touching this file. An argument or option
// named project, frame or team is completed with names from the service, through
// `frameplane __complete` (complete-names.ts), which keeps them 30 s.
import { Argument, type Command, type Option } from 'commander';
import { KINDS } from './complete-names.ts';
import { bash, fish, type Tree, zsh } from './completion-scripts.ts';

const kindOf = (name: string) => KINDS.find((k) => k === name);

const flagsOf = (o: Option) => [o.long, o.short].filter((f): f is string => Boolean(f));

function walk(root: Command): Tree {
  const help = root.createHelp();
  // --server, --token, --json: accepted after any command (optsWithGlobals).
  const globals = help
    .visibleOptions(root)
    .filter((o) => o.long !== '--version' && o.long !== '--help');
  const valued = new Set<string>();
  const named = new Map<string, string>();
  const paths: Tree['paths'] = [];
  const args: Tree['args'] = [];
  const visit = (cmd: Command, path: string) => {
    const own = help.visibleOptions(cmd);
    // A command without even --help parses its own arguments (`agent`): nothing to offer.
    const options = own.length === 0 ? [] : cmd === root ? own : [...own, ...globals];
    for (const o of options)
      if (o.required || o.optional)
        for (const f of flagsOf(o)) {
          valued.add(f);
          const kind = kindOf(o.attributeName());
          if (kind) named.set(f, kind);
        }
    const kinds = cmd.registeredArguments.map((a) => kindOf(a.name()) ?? '-');
    if (kinds.some((k) => k !== '-')) args.push({ path, kinds: kinds.join(' ') });
    const words = [
      ...help.visibleCommands(cmd).map((c) => ({ word: c.name(), description: c.description() })),
      // Arguments with a fixed set of values (`completion <shell>`) offer them.
      ...cmd.registeredArguments.flatMap((a) =>
        (a.argChoices ?? []).map((word) => ({ word, description: a.description })),
      ),
      ...options.flatMap((o) => flagsOf(o).map((word) => ({ word, description: o.description }))),
    ];
    paths.push({ path, words });
    for (const c of cmd.commands) visit(c, path ? `${path} ${c.name()}` : c.name());
  };
  visit(root, '');
  const flags = [...named].map(([flag, kind]) => ({ flag, kind }));
  return { paths, valued: [...valued].sort(), args, named: flags };
}

const SHELLS = { bash, zsh, fish };

export function register(program: Command) {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(Object.keys(SHELLS)))
    .addHelpText(
      'after',
      '\nbash: source <(frameplane completion bash)   (or save it in ' +
        '~/.local/share/bash-completion/completions/frameplane)\n' +
        'zsh:  source <(frameplane completion zsh)   (in ~/.zshrc, after compinit)\n' +
        'fish: frameplane completion fish > ~/.config/fish/completions/frameplane.fish',
    )
    .action((shell: keyof typeof SHELLS) => {
      process.stdout.write(SHELLS[shell](walk(program)));
    });
}
