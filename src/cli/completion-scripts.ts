// The completion scripts of bash, zsh and fish, from the command tree that completion.ts reads
// out of commander: each walks the typed words through the tree's table, and asks
// `frameplane __complete` (complete-names.ts) for the names an argument or option takes.

export interface Word {
  word: string;
  description: string;
}

export interface Tree {
  /** Each command path ('' is the program itself) and what may follow it. */
  paths: Array<{ path: string; words: Word[] }>;
  /** Options followed by a value (--project Shop): the value is skipped, unless it names. */
  valued: string[];
  /** The command paths whose arguments name things: each argument's kind, '-' for none. */
  args: Array<{ path: string; kinds: string }>;
  /** The options whose value names a thing (-p, --project, --team) and its kind. */
  named: Array<{ flag: string; kind: string }>;
}

/** A shell word in single quotes (the same rule in bash, zsh and fish for these strings). */
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** Fish has no '\'' inside single quotes; a backslash escapes the quote there. */
const fishQuote = (s: string) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;

/** The shell function that answers the kinds of a path's arguments (the same in all three). */
const argsCases = (args: Tree['args'], q: (s: string) => string) =>
  args.map(({ path, kinds }) => `    ${q(path)}) echo ${q(kinds)} ;;`).join('\n');
/** bash's and zsh's: the words that may follow a path, and the kinds of its arguments. */
const caseFunctions = (cases: string[], args: Tree['args']) => `_frameplane_words() {
  case "$1" in
${cases.join('\n')}
    *) return 1 ;;
  esac
}

_frameplane_args() {
  case "$1" in
${argsCases(args, quote)}
  esac
}`;
/** A case that sets `kind` from the option before the word being completed. */
const namedCases = (named: Tree['named']) =>
  named.map(({ flag, kind }) => `${flag}) kind=${kind} ;;`).join(' ');

export function bash({ paths, valued, args, named }: Tree): string {
  const cases = paths.map(
    ({ path, words }) =>
      `    ${quote(path)}) words=${quote(words.map((w) => w.word).join(' '))} ;;`,
  );
  return `# frameplane completion for bash. Load it with: source <(frameplane completion bash)
${caseFunctions(cases, args)}

_frameplane() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path='' words='' w i n=0 project='' valued='' kind=''
  local -a kinds
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in
      ${valued.join('|')})
        ((i + 1 == COMP_CWORD)) && { valued="$w"; break; } # a value comes next
        [[ $w == -p || $w == --project ]] && project="\${COMP_WORDS[i + 1]}"
        ((i++)); continue ;;
      -*) continue ;;
    esac
    if _frameplane_words "\${path:+$path }$w"; then
      path="\${path:+$path }$w" n=0
    else
      ((n++))
    fi
  done
  if [[ -n $valued ]]; then
    case "$valued" in ${namedCases(named)} *) COMPREPLY=(); return ;; esac
  elif [[ $cur != -* ]]; then
    kinds=($(_frameplane_args "$path"))
    kind="\${kinds[n]}"
    [[ $kind == - ]] && kind=''
  fi
  if [[ -n $kind ]]; then
    COMPREPLY=()
    local name
    while IFS= read -r name; do COMPREPLY+=("$(printf '%q' "$name")"); done < <(
      "\${COMP_WORDS[0]}" __complete "$kind" "$cur" \${project:+--project "$project"} 2>/dev/null)
    return
  fi
  _frameplane_words "$path"
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _frameplane frameplane
`;
}

export function zsh({ paths, valued, args, named }: Tree): string {
  const cases = paths.map(({ path, words }) => {
    const described = words.map((w) => quote(`${w.word}:${w.description}`));
    return `    ${quote(path)}) reply=(${described.join(' ')}) ;;`;
  });
  return `#compdef frameplane
# frameplane completion for zsh. Load it with: source <(frameplane completion zsh)
${caseFunctions(cases, args)}

_frameplane() {
  local cmdpath='' w i n=0 project='' valued='' kind=''
  local -a reply kinds names
  for ((i = 2; i < CURRENT; i++)); do
    w=\${words[i]}
    case "$w" in
      ${valued.join('|')})
        ((i + 1 == CURRENT)) && { valued=$w; break; } # a value comes next
        [[ $w == -p || $w == --project ]] && project=\${words[i + 1]}
        ((i++)); continue ;;
      -*) continue ;;
    esac
    if _frameplane_words "\${cmdpath:+$cmdpath }$w"; then
      cmdpath="\${cmdpath:+$cmdpath }$w" n=0
    else
      ((n++))
    fi
  done
  if [[ -n $valued ]]; then
    case "$valued" in ${namedCases(named)} *) _default; return ;; esac
  elif [[ \${words[CURRENT]} != -* ]]; then
    kinds=(\${=$(_frameplane_args "$cmdpath")})
    kind=\${kinds[n + 1]}
    [[ $kind == - ]] && kind=''
  fi
  if [[ -n $kind ]]; then
    local answer
    answer=$(\${words[1]} __complete $kind "\${words[CURRENT]}" \${project:+--project "$project"} \\
      2>/dev/null)
    names=(\${(f)answer})
    compadd -a names
    return
  fi
  _frameplane_words "$cmdpath"
  _describe -t commands frameplane reply
}

if [ "$funcstack[1]" = "_frameplane" ]; then _frameplane "$@"; else compdef _frameplane frameplane; fi
`;
}

export function fish({ paths, valued, args, named }: Tree): string {
  const cases = paths.map(({ path, words }) => {
    const pairs = words.map((w) => `${fishQuote(w.word)} ${fishQuote(w.description)}`);
    return `        case ${fishQuote(path)}\n            printf '%s\\t%s\\n' ${pairs.join(' ')}`;
  });
  const argCases = args.map(
    ({ path, kinds }) => `        case ${fishQuote(path)}\n            echo ${fishQuote(kinds)}`,
  );
  const namedCases = named.map(
    ({ flag, kind }) => `            case ${fishQuote(flag)}\n                set kind ${kind}`,
  );
  return `# frameplane completion for fish. Load it with: frameplane completion fish | source
function __frameplane_words
    switch $argv[1]
${cases.join('\n')}
        case '*'
            return 1
    end
end

function __frameplane_args
    switch $argv[1]
${argCases.join('\n')}
    end
end

function __frameplane_complete
    set -l path ''
    set -l skip 0
    set -l n 0
    set -l project ''
    set -l prev ''
    for w in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            contains -- $prev -p --project; and set project $w
            continue
        end
        switch $w
            case ${valued.map(fishQuote).join(' ')}
                set skip 1
                set prev $w
                continue
            case '-*'
                continue
        end
        set -l next (string trim -- "$path $w")
        if __frameplane_words $next >/dev/null
            set path $next
            set n 0
        else
            set n (math $n + 1)
        end
    end
    set -l cur (commandline -ct)
    set -l kind ''
    if test $skip = 1 # a value comes next
        switch $prev
${namedCases.join('\n')}
            case '*'
                return
        end
    else if not string match -q -- '-*' $cur
        set -l kinds (string split ' ' -- (__frameplane_args $path))
        set kind $kinds[(math $n + 1)]
        test "$kind" = '-'; and set kind ''
    end
    if test -n "$kind"
        set -l command __complete $kind $cur
        test -n "$project"; and set command $command --project $project
        set -l program (commandline -opc)[1]
        $program $command 2>/dev/null
        return
    end
    __frameplane_words $path
end

complete -c frameplane -f -a '(__frameplane_complete)'
`;
}
