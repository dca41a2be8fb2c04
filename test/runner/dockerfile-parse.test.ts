// A tenant's Dockerfile is read as the Engine's parser reads it
// (src/runner/builder/dockerfile-parse.ts), and the Engine is given a rendering of one instruction
// a line that reads back the same: no comment, continuation, directive or here-document can
// hide an instruction from the check.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  builderFlags,
  parseDockerfile,
  renderDockerfile,
} from '../../src/runner/builder/dockerfile-parse.ts';

const read = (text: string) =>
  parseDockerfile(text).instructions.map((i) => [i.line, i.keyword, i.rest]);

describe('reading a Dockerfile as the Engine does', () => {
  it.each<[string, string, unknown[]]>([
    [
      'one per line',
      'FROM a\nRUN b\n',
      [
        [1, 'FROM', 'a'],
        [2, 'RUN', 'b'],
      ],
    ],
    [
      'keywords in any case, indented',
      '  from a\n\trun  b  \n',
      [
        [1, 'FROM', 'a'],
        [2, 'RUN', 'b'],
      ],
    ],
    [
      'a BOM and CRLF',
      '\ufeffFROM a\r\nRUN b\r\n',
      [
        [1, 'FROM', 'a'],
        [2, 'RUN', 'b'],
      ],
    ],
    [
      'no newline at the end',
      'FROM a\nRUN b',
      [
        [1, 'FROM', 'a'],
        [2, 'RUN', 'b'],
      ],
    ],
    [
      'continuations keep the left space of later lines, drop space after the escape',
      'RUN a \\  \n   b\\\nc\n',
      [[1, 'RUN', 'a    bc']],
    ],
    [
      'comment and empty lines inside a continuation are skipped',
      'RUN a \\\n  # not part of it\n\n  b\nFROM c\n',
      [
        [1, 'RUN', 'a   b'],
        [5, 'FROM', 'c'],
      ],
    ],
    [
      'a continuation into the end of the file',
      'FROM a\nRUN b \\\n',
      [
        [1, 'FROM', 'a'],
        [2, 'RUN', 'b'],
      ],
    ],
    [
      'the escape directive makes ` the continuation, and \\ plain',
      '# escape=`\nRUN a\\b `\n c\nFROM d \\\n',
      [
        [2, 'RUN', 'a\\b  c'],
        [4, 'FROM', 'd \\'],
      ],
    ],
    ['a syntax directive before it', '# syntax=x\n# escape=`\nRUN a `\nb\n', [[3, 'RUN', 'a b']]],
    [
      'a directive after a blank line is a comment',
      '\n# escape=`\nRUN a \\\nFROM b\n',
      [[3, 'RUN', 'a FROM b']],
    ],
    [
      'a directive after another comment is a comment',
      '# hello\n# escape=`\nRUN a \\\nFROM b\n',
      [[3, 'RUN', 'a FROM b']],
    ],
    [
      'directives are case-insensitive and spaced',
      '#  ESCAPE = `\nRUN a `\nb\n',
      [[2, 'RUN', 'a b']],
    ],
  ])('%s', (_, text, want) => {
    expect(read(text)).toEqual(want);
  });

  it.each<[string, string, RegExp]>([
    ['an unknown instruction', 'FROM a\nFETCH b\n', /line 2: unknown instruction FETCH/],
    ['no instruction at all', '# only a comment\n\n', /no instructions/],
    ['a here-document', 'FROM a\nRUN <<EOF\nFROM b\nEOF\n', /line 2: here-documents/],
    ['a quoted here-document', 'FROM a\nCOPY <<"EOF" /x\nhi\nEOF\n', /here-documents/],
    ['a second escape directive', '# escape=`\n# escape=\\\nFROM a\n', /only one escape/],
    ['a bad escape token', '# escape=x\nFROM a\n', /invalid escape token/],
    ['an instruction ending with the escape', 'FROM a\nRUN b\\\\\n', /ends with the escape/],
    ['a control character', 'FROM a\nRUN b\u000bc\n', /control character/],
  ])('refuses %s', (_, text, want) => {
    expect(() => parseDockerfile(text)).toThrow(want);
  });
});

describe('builder flags, as the Engine extracts them', () => {
  it.each<[string, string[], string, boolean]>([
    ['--from=a /x /y', ['--from=a'], '/x /y', false],
    ['--chown=1 --from=a /x /y', ['--chown=1', '--from=a'], '/x /y', false],
    ['--from="frame plane" x', ['--from=frame plane'], 'x', false],
    ['--fr\\om=a x', ['--from=a'], 'x', false],
    ["--from='a' x", ['--from=a'], 'x', false],
    ['-- --from=a x', [], '--from=a x', false],
    ['--from a x', ['--from=a'], 'x', true],
    ['x --from=a', [], 'x --from=a', false],
    ['["--from=a", "b"]', [], '["--from=a", "b"]', false],
  ])('%s', (rest, flags, args, spaced) => {
    expect(builderFlags(rest)).toEqual({ flags, args, spacedValue: spaced });
  });
});

// Instruction text as tenants write it: words of printable characters, escapes and quotes.
const word = fc.stringMatching(/^[A-Za-z0-9_./:=$"'{}\\`@-]{1,12}$/);
const instruction = fc.record({
  keyword: fc.constantFrom('FROM', 'RUN', 'COPY', 'ADD', 'ENV', 'ARG', 'LABEL', 'WORKDIR', 'CMD'),
  words: fc.array(word, { minLength: 1, maxLength: 6 }),
});
const clean = (ins: { keyword: string; words: string[] }, token: string) => ({
  ...ins,
  // A rest ending with the escape character is refused; keep these to the readable ones.
  words: ins.words.map((w) => (w.endsWith(token) ? `${w}x` : w)),
});

describe('the rendering the Engine builds', () => {
  it('reads back as the same instructions, whatever the layout of the original', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('\\', '`'),
        fc.array(instruction, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (token, raw, cuts) => {
          const list = raw.map((i) => clean(i, token));
          // Lay each instruction out over several lines at arbitrary points, with comments
          // and blank lines between the parts, as the Engine allows.
          let n = 0;
          const layout = list.map(({ keyword, words }) => {
            const text = words.join(' ');
            const cut = (cuts[n++] ?? 0) % (text.length + 1);
            const head = text.slice(0, cut);
            const tail = text.slice(cut);
            if (!tail.trim() || tail.trim().startsWith('#') || !head) return `${keyword} ${text}`;
            return `${keyword} ${head}${token}\n  # a comment\n\n${tail}`;
          });
          const directive = token === '`' ? '# escape=`\n' : '';
          const parsed = parseDockerfile(`${directive}${layout.join('\n')}\n`);
          const expected = list.map(({ keyword, words }) => [keyword, words.join(' ')]);
          const got = parsed.instructions.map((i) => [i.keyword, i.rest]);
          expect(got).toEqual(expected);
          const again = parseDockerfile(renderDockerfile(parsed));
          expect(again).toEqual({
            escape: token,
            instructions: parsed.instructions.map((i, k) => ({
              ...i,
              line: k + 1 + (token === '`' ? 1 : 0),
            })),
          });
        },
      ),
    );
  });
});
