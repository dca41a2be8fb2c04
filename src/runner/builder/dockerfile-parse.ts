// A tenant's Dockerfile read the way the Docker Engine reads it: a port of the line rules of the
// Engine's parser (moby/buildkit frontend/dockerfile/parser: directives, comments, continuations,
// builder flags), so that dockerfile-policy.ts can check every image a build would use before
// the Engine sees the file. The Engine is then given renderDockerfile's text, one instruction a
// line, never the tenant's file: wherever this reader and the Engine's parser might disagree
// (comments inside continuations, directives, heredocs), the builder still runs exactly the
// instructions that were checked.

export interface Instruction {
  /** The line of the tenant's file where it starts (from 1), for messages. */
  line: number;
  /** Upper case. */
  keyword: string;
  /** Everything after the keyword, continuations joined, flags included. */
  rest: string;
}

export interface ParsedDockerfile {
  escape: '\\' | '`';
  instructions: Instruction[];
}

export class DockerfileError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

const KEYWORDS = new Set([
  ...['ADD', 'ARG', 'CMD', 'COPY', 'ENTRYPOINT', 'ENV', 'EXPOSE', 'FROM', 'HEALTHCHECK', 'LABEL'],
  ...['MAINTAINER', 'ONBUILD', 'RUN', 'SHELL', 'STOPSIGNAL', 'USER', 'VOLUME', 'WORKDIR'],
]);

// Go's unicode.IsSpace, which the Engine trims lines with.
const SPACE = '\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000';
const leftTrim = (s: string) => s.replace(new RegExp(`^[${SPACE}]+`), '');
const trimSpace = (s: string) => leftTrim(s).replace(new RegExp(`[${SPACE}]+$`), '');
const isComment = (raw: string) => leftTrim(raw).startsWith('#');
const isControl = (c: string) => (c < ' ' && c !== '\t') || c === '\x7f';
// Go's \s is [\t\n\f\r ]; only these two directives exist.
const DIRECTIVE = /^#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*$/;
// A here-document (`<<EOF`): the Engine's classic builder reads its lines as instructions, newer
// parsers as data; neither reading may be left to chance.
const HEREDOC = /<<-?[\t ]*["']?[A-Za-z0-9_]/;

/** Throws DockerfileError for a file the Engine refuses, or this reader cannot vouch for. */
export function parseDockerfile(text: string): ParsedDockerfile {
  // bufio.ScanLines: lines end at \n, a \r before it is dropped, no empty line after the last \n.
  const lines = text.replace(/^\ufeff/, '').split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (let i = 0; i < lines.length; i++) lines[i] = (lines[i] as string).replace(/\r$/, '');

  let token: '\\' | '`' = '\\';
  let directivesDone = false;
  const seen = new Set<string>();
  const directive = (line: string, at: number) => {
    if (directivesDone) return;
    const m = DIRECTIVE.exec(line);
    const name = m?.[1]?.toLowerCase();
    if (!m || (name !== 'escape' && name !== 'syntax')) {
      directivesDone = true;
      return;
    }
    if (seen.has(name))
      throw new DockerfileError(at, `only one ${name} parser directive can be used`);
    seen.add(name);
    if (name === 'escape') {
      if (m[2] !== '\\' && m[2] !== '`')
        throw new DockerfileError(at, `invalid escape token '${m[2]}' does not match \` or \\`);
      token = m[2];
    }
  };
  const continued = (line: string): [string, boolean] => {
    const m = (token === '\\' ? /\\[ \t]*$/ : /`[ \t]*$/).exec(line);
    return m ? [line.slice(0, m.index), true] : [line, false];
  };

  const instructions: Instruction[] = [];
  let i = 0;
  while (i < lines.length) {
    const start = i + 1;
    const first = leftTrim(lines[i++] as string);
    directive(first, start);
    let [line, more] = continued(first.startsWith('#') ? '' : first);
    if (!more && line === '') continue;
    while (more && i < lines.length) {
      const raw = lines[i++] as string;
      directive(raw, i);
      if (isComment(raw) || leftTrim(raw) === '') continue; // the Engine skips both
      const [part, again] = continued(raw);
      line += part;
      more = again;
    }
    instructions.push(instructionOf(line, start, token));
  }
  if (!instructions.length)
    throw new DockerfileError(lines.length, 'the Dockerfile has no instructions');
  return { escape: token, instructions };
}

function instructionOf(line: string, at: number, token: string): Instruction {
  const m = /^([^\t\v\f\r ]+)(?:[\t\v\f\r ]+([\s\S]*))?$/.exec(trimSpace(line));
  const keyword = (m?.[1] ?? '').toUpperCase();
  const rest = m?.[2] ?? '';
  if (!KEYWORDS.has(keyword)) throw new DockerfileError(at, `unknown instruction ${keyword}`);
  // Control characters could end or split a line of the rendering in a way the check did not see.
  if ([...rest].some(isControl))
    throw new DockerfileError(at, 'a control character in an instruction');
  if (rest.endsWith(token))
    throw new DockerfileError(at, 'the instruction ends with the escape character');
  if (HEREDOC.test(rest) && /^(RUN|COPY|ADD|ONBUILD)$/.test(keyword))
    throw new DockerfileError(
      at,
      'here-documents (<<EOF) are not supported: write the file in the repository',
    );
  return { line: at, keyword, rest };
}

/** The text the Engine builds: one instruction a line, so it reads exactly what was checked. */
export function renderDockerfile(p: ParsedDockerfile): string {
  const lines = p.instructions.map((i) => (i.rest ? `${i.keyword} ${i.rest}` : i.keyword));
  return [...(p.escape === '`' ? ['# escape=`'] : []), ...lines, ''].join('\n');
}

/** A one-line instruction (an ONBUILD trigger, an image's OnBuild entry), split the same way. */
export function splitInstruction(text: string): { keyword: string; rest: string } {
  const m = /^([^\t\v\f\r ]+)(?:[\t\v\f\r ]+([\s\S]*))?$/.exec(trimSpace(text));
  return { keyword: (m?.[1] ?? '').toUpperCase(), rest: m?.[2] ?? '' };
}

export interface BuilderFlags {
  /** `--name=value` words, quotes and backslashes removed as the Engine removes them. */
  flags: string[];
  /** The arguments after the flags. */
  args: string;
  /** A flag took the next word as its value (`--from image`): only newer Engines read it so. */
  spacedValue: boolean;
}

/**
 * The Engine's extractBuilderFlags, byte for byte (it reads bytes, and a byte 0x85 or 0xA0 of a
 * UTF-8 character is a space to it), including the newer reading of `--flag value`.
 */
export function builderFlags(rest: string): BuilderFlags {
  const line = Buffer.from(rest, 'utf8');
  const isSpace = (b: number) => (b >= 9 && b <= 13) || b === 32 || b === 0x85 || b === 0xa0;
  const words: number[][] = [];
  let word: number[] = [];
  let phase: 'spaces' | 'word' | 'quote' = 'spaces';
  let quote = 0;
  let blankOk = false;
  let flagArg = false;
  let needArg = true;
  let spacedValue = false;
  const text = (w: number[]) => Buffer.from(w).toString('utf8');
  const done = (pos: number): BuilderFlags => ({
    flags: words.map(text),
    args: trimSpace(line.subarray(pos).toString('utf8')),
    spacedValue,
  });
  for (let pos = 0; pos <= line.length; pos++) {
    let ch = pos < line.length ? (line[pos] as number) : 0;
    if (phase === 'spaces') {
      if (pos === line.length) break;
      if (isSpace(ch)) continue;
      const dashes = ch === 45 && pos + 1 < line.length && line[pos + 1] === 45;
      if (!flagArg && !dashes) return done(pos);
      phase = 'word';
    }
    if (pos === line.length) {
      if (text(word) !== '--' && (blankOk || word.length > 0)) words.push(word);
      break;
    }
    if (phase === 'word') {
      if (isSpace(ch)) {
        phase = 'spaces';
        if (flagArg) {
          words[words.length - 1] = [...(words.at(-1) as number[]), 61, ...word];
          spacedValue = true;
          flagArg = false;
          needArg = true;
        } else {
          if (text(word) === '--') return done(pos);
          if (blankOk || word.length > 0) {
            if (needArg) flagArg = true;
            words.push(word);
          }
        }
        word = [];
        blankOk = false;
        continue;
      }
      if (ch === 61 && needArg) needArg = false;
      if (ch === 39 || ch === 34) {
        quote = ch;
        blankOk = true;
        phase = 'quote';
        continue;
      }
      if (ch === 92) {
        if (pos + 1 === line.length) continue;
        ch = line[++pos] as number;
      }
      word.push(ch);
      continue;
    }
    if (ch === quote) {
      phase = 'word';
      continue;
    }
    if (ch === 92) {
      if (pos + 1 === line.length) {
        phase = 'word';
        continue;
      }
      ch = line[++pos] as number;
    }
    word.push(ch);
  }
  return done(line.length);
}
