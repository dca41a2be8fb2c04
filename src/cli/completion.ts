// frameplane completion bash|zsh|fish: a script that completes commands, subcommands and options.
// Commander has no completion of its own, so the script is generated from its command tree: a
// table from each command path ("frames env") to the words that may follow it, and one small
// function per shell that walks the typed words through that table. Every shell gets the same
// table, so a new command completes everywhere without touching this file.
import { Argument, type Command, type Option } from 'commander';

interface Word {
  word: string;
  description: string;
}

interface Tree {
  /** Each command path ('' is the program itself) and what may follow it. */
  paths: Array<{ path: string; words: Word[] }>;
  /** Options followed by a value (--project Shop): the value is skipped, never completed. */
  valued: string[];
}

const flagsOf = (o: Option) => [o.long, o.short].filter((f): f is string => Boolean(f));

function walk(root: Command): Tree {
  const help = root.createHelp();
  // --server, --token, --json: accepted after any command (optsWithGlobals).
  const globals = help
    .visibleOptions(root)
    .filter((o) => o.long !== '--version' && o.long !== '--help');
  const valued = new Set<string>();
  const paths: Tree['paths'] = [];
  const visit = (cmd: Command, path: string) => {
    const own = help.visibleOptions(cmd);
    // A command without even --help parses its own arguments (`agent`): nothing to offer.
    const options = own.length === 0 ? [] : cmd === root ? own : [...own, ...globals];
    for (const o of options)
      if (o.required || o.optional) for (const f of flagsOf(o)) valued.add(f);
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
  return { paths, valued: [...valued].sort() };
}

/** A shell word in single quotes (the same rule in bash, zsh and fish for these strings). */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** Fish has no '\'' inside single quotes; a backslash escapes the quote there. */
const fishQuote = (s: string) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;

function bash({ paths, valued }: Tree): string {
  const cases = paths.map(
    ({ path, words }) =>
      `    ${quote(path)}) words=${quote(words.map((w) => w.word).join(' '))} ;;`,
  );
  return `# frameplane completion for bash. Load it with: source <(frameplane completion bash)
_frameplane_words() {
  case "$1" in
${cases.join('\n')}
    *) return 1 ;;
  esac
}

_frameplane() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path='' words='' w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in
      ${valued.join('|')})
        ((i + 1 == COMP_CWORD)) && { COMPREPLY=(); return; } # a value comes next
        ((i++)); continue ;;
      -*) continue ;;
    esac
    _frameplane_words "\${path:+$path }$w" && path="\${path:+$path }$w"
  done
  _frameplane_words "$path"
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _frameplane frameplane
`;
}

function zsh({ paths, valued }: Tree): string {
  const cases = paths.map(({ path, words }) => {
    const described = words.map((w) => quote(`${w.word}:${w.description}`));
    return `    ${quote(path)}) reply=(${described.join(' ')}) ;;`;
  });
  return `#compdef frameplane
# frameplane completion for zsh. Load it with: source <(frameplane completion zsh)
_frameplane_words() {
  case "$1" in
${cases.join('\n')}
    *) return 1 ;;
  esac
}

_frameplane() {
  local cmdpath='' w i
  local -a reply
  for ((i = 2; i < CURRENT; i++)); do
    w=\${words[i]}
    case "$w" in
      ${valued.join('|')})
        ((i + 1 == CURRENT)) && { _default; return; } # a value comes next
        ((i++)); continue ;;
      -*) continue ;;
    esac
    _frameplane_words "\${cmdpath:+$cmdpath }$w" && cmdpath="\${cmdpath:+$cmdpath }$w"
  done
  _frameplane_words "$cmdpath"
  _describe -t commands frameplane reply
}

if [ "$funcstack[1]" = "_frameplane" ]; then _frameplane "$@"; else compdef _frameplane frameplane; fi
`;
}

function fish({ paths, valued }: Tree): string {
  const cases = paths.map(({ path, words }) => {
    const pairs = words.map((w) => `${fishQuote(w.word)} ${fishQuote(w.description)}`);
    return `        case ${fishQuote(path)}\n            printf '%s\\t%s\\n' ${pairs.join(' ')}`;
  });
  return `# frameplane completion for fish. Load it with: frameplane completion fish | source
function __frameplane_words
    switch $argv[1]
${cases.join('\n')}
        case '*'
            return 1
    end
end

function __frameplane_complete
    set -l path ''
    set -l skip 0
    for w in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case ${valued.map(fishQuote).join(' ')}
                set skip 1
                continue
            case '-*'
                continue
        end
        set -l next (string trim -- "$path $w")
        __frameplane_words $next >/dev/null; and set path $next
    end
    test $skip = 1; and return # a value comes next
    __frameplane_words $path
end

complete -c frameplane -f -a '(__frameplane_complete)'
`;
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
