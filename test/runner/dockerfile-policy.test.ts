// What a tenant's Dockerfile may use (src/runner/builder/dockerfile-policy.ts), as a pure function
// of its instructions and the Engine's answer about each image: its own frame's images, stages,
// and images the operator pulled or tagged; never another frame's images by name or id, an
// untagged image of someone's build, nor an ADD the Engine would fetch from the host's network.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from '../../src/runner/builder/dockerfile-parse.ts';
import { type Lookup, refusalsOf } from '../../src/runner/builder/dockerfile-policy.ts';
import { imageRepo } from '../../src/runner/builder/image-reference.ts';

const FRAME = '01JOWNFRAME0000000000000000';
const OWN = imageRepo(FRAME);
const OTHER = imageRepo('01JOTHERFRAME00000000000000');
const ID = 'a'.repeat(64);

const operator: Lookup = { found: true, names: ['local/node:20'], onBuild: [] };
const own: Lookup = { found: true, names: [`${OWN}:abc`], frame: FRAME, onBuild: [] };
const otherFrames: Lookup = {
  found: true,
  names: [`${OTHER}:abc`],
  frame: '01JOTHERFRAME00000000000000',
  onBuild: [],
};
const intermediate: Lookup = { found: true, names: [], onBuild: [] };
const retagged: Lookup = { ...otherFrames, names: [`${OTHER}:abc`, 'myapp:prod'] } as Lookup;
const missing: Lookup = { found: false, why: 'not on this machine, and pulling it failed: no' };
const evilOnBuild: Lookup = {
  found: true,
  names: ['evil/onbuild:1'],
  onBuild: [`COPY --from=${OTHER}:abc /app /stolen`],
};

/** The refusals of a Dockerfile, the Engine answering from `engine` (others: missing). */
function check(text: string, engine: Record<string, Lookup> = {}) {
  const asked: string[] = [];
  const refusals = refusalsOf(parseDockerfile(text), FRAME, (ref) => {
    asked.push(ref);
    return engine[ref] ?? missing;
  });
  return { refusals: refusals.map((r) => `line ${r.line}: ${r.reason}`), asked };
}

describe('what a Dockerfile may use', () => {
  it.each<[string, string, Record<string, Lookup>]>([
    ['an image the operator pulled', 'FROM local/node:20\n', { 'local/node:20': operator }],
    ["the frame's own image", `FROM ${OWN}:abc\n`, { [`${OWN}:abc`]: own }],
    [
      "the frame's own image in a registry",
      `FROM 127.0.0.1:5000/${OWN}:abc\n`,
      { [`127.0.0.1:5000/${OWN}:abc`]: { ...own, names: [`127.0.0.1:5000/${OWN}:abc`] } as Lookup },
    ],
    ['scratch', 'FROM scratch\nCOPY a /a\n', {}],
    [
      'an ARG before FROM, with defaults and quotes',
      `ARG REPO="local/node" TAG=20\nARG BASE=\${REPO}:\${TAG}\nFROM \${BASE}\n`,
      { 'local/node:20': operator },
    ],
    [
      'a default of an empty ARG',
      `ARG X\nFROM \${X:-local/node:20}\n`,
      { 'local/node:20': operator },
    ],
    [
      'stages by name and index',
      'FROM local/node:20 AS Build\nFROM scratch\nCOPY --from=build /a /a\nCOPY --from=0 /b /b\n' +
        'RUN --mount=type=bind,from=build,target=/x true\nFROM BUILD\n',
      { 'local/node:20': operator },
    ],
    [
      'an image the operator tagged, by that name',
      'FROM scratch\nCOPY --from=myapp:prod /a /a\n',
      { 'myapp:prod': retagged },
    ],
    [
      'a local archive and a cache mount',
      'FROM scratch\nADD app.tgz /app\nRUN --mount=type=cache,target=/c x\n',
      {},
    ],
    ['its own ONBUILD without copies', 'FROM scratch\nONBUILD RUN echo hi\n', {}],
  ])('allows %s', (_, text, engine) => {
    expect(check(text, engine).refusals).toEqual([]);
  });

  it.each<[string, string, Record<string, Lookup>, RegExp]>([
    ["another frame's image by name", `FROM ${OTHER}:abc\n`, {}, /line 1: FROM .* another frame's/],
    ['… in a registry', `FROM localhost:5000/${OTHER}:abc\n`, {}, /another frame's/],
    ['… on Docker Hub', `FROM docker.io/${OTHER}\n`, {}, /another frame's/],
    ['… as the bare namespace', 'FROM frameplane\n', {}, /another frame's/],
    ['… copied from', `FROM scratch\nCOPY --from=${OTHER}:abc / /x\n`, {}, /line 2: COPY --from/],
    [
      '… mounted',
      `FROM scratch\nRUN --mount=type=bind,from=${OTHER}:abc,target=/x cat /x/y\n`,
      {},
      /line 2: RUN --mount from .* another frame's/,
    ],
    ['… through an ARG', `ARG B=${OTHER}:abc\nFROM $B\n`, {}, /line 2: FROM .* another frame's/],
    [
      "an untagged image of someone's build, by id",
      `FROM scratch\nCOPY --from=sha256:${ID} / /x\n`,
      { [`sha256:${ID}`]: intermediate },
      /not this frame's, nor pulled or tagged/,
    ],
    [
      "another frame's image by short id",
      'FROM 3f2a9c1b\n',
      { '3f2a9c1b': otherFrames },
      /not this frame's, nor pulled or tagged/,
    ],
    [
      "another frame's image by id, though the operator tagged it",
      `FROM scratch\nCOPY --from=${ID} / /x\n`,
      { [ID]: retagged },
      /another frame's image, named by id/,
    ],
    ['a missing image', 'FROM nowhere/thing:1\n', {}, /pulling it failed/],
    [
      'an image whose ONBUILD copies from another',
      'FROM evil/onbuild:1\n',
      { 'evil/onbuild:1': evilOnBuild },
      /ONBUILD trigger .* copies from another image/,
    ],
    [
      'its own ONBUILD copying from an image',
      `FROM scratch AS a\nONBUILD COPY --from=${OTHER}:abc / /x\nFROM a\n`,
      {},
      /line 2: ONBUILD copies from another image/,
    ],
    ['a variable without a value', `FROM \${NOPE}\n`, {}, /with variables only of ARGs/],
    ['a variable in --from', 'FROM scratch\nCOPY --from=$STAGE / /\n', {}, /plainly/],
    [
      'an ARG Frameplane cannot read, used in FROM',
      'ARG A="x y"\nFROM local/node:$A\n',
      {},
      /with variables only of ARGs/,
    ],
    ['a quoted FROM', `FROM "${OTHER}:abc"\n`, {}, /write the image plainly/],
    ['an escaped FROM', 'FROM frame\\plane/x\n', {}, /plainly/],
    ['a spaced flag value', `FROM scratch\nCOPY --from ${OTHER} / /\n`, {}, /--name=value/],
    ['FROM --platform', 'FROM --platform=linux/arm64 local/node:20\n', {}, /--platform/],
    [
      'a stage copying from itself (the Engine reads an image there)',
      'FROM scratch AS deadbeef\nCOPY --from=deadbeef / /x\n',
      { deadbeef: intermediate },
      /line 2: COPY --from deadbeef: an image built here/,
    ],
    ['ADD from loopback', 'FROM scratch\nADD http://127.0.0.1:9/x /x\n', {}, /RUN step/],
    ['ADD of git', 'FROM scratch\nADD git@github.com:a/b.git /x\n', {}, /URL or git/],
    ['ADD in JSON form', 'FROM scratch\nADD ["https://x/y", "/z"]\n', {}, /URL or git/],
    ['ADD with JSON escapes', 'FROM scratch\nADD ["http:\\u002f\\u002fx/", "/z"]\n', {}, /URL/],
    ['ADD with a variable', 'ARG U=http://x/\nFROM scratch\nADD $U /z\n', {}, /variable/],
  ])('refuses %s', (_, text, engine, want) => {
    const { refusals } = check(text, engine);
    expect(refusals.join('\n')).toMatch(want);
  });

  it('refuses another frame by name without asking the Engine about it', () => {
    const { refusals, asked } = check(`FROM ${OTHER}:abc\nCOPY --from=${OTHER}:def / /\n`);
    expect(refusals).toHaveLength(2);
    expect(asked).toEqual([]);
  });
});

// Another frame's repository, written any way the Engine reads it.
const otherRepo = fc
  .tuple(
    fc.constantFrom('', 'docker.io/', 'localhost:5000/', 'registry.example:443/', '127.0.0.1/'),
    fc.stringMatching(/^[a-z0-9]{1,20}$/),
    fc.constantFrom('', ':latest', ':0123abc', `@sha256:${ID}`),
  )
  .filter(([, frame]) => `frameplane/${frame}` !== OWN)
  .map(([registry, frame, tail]) => `${registry}frameplane/${frame}${tail}`);
const line = fc.constantFrom(
  'RUN echo hi',
  'COPY . /app',
  'ENV A=1',
  'FROM local/node:20 AS base',
  'WORKDIR /app',
  'ARG X=1',
);
const anyLookup = fc.oneof(
  fc.constant(operator),
  fc.constant(own),
  fc.constant(retagged),
  fc.constant(missing),
  fc.record({
    found: fc.constant(true as const),
    names: fc.array(
      fc.constantFrom('local/node:20', `${OWN}:abc`, `${OTHER}:x`, `a/b@sha256:${ID}`),
    ),
    frame: fc.constantFrom(undefined, FRAME, 'OTHER'),
    onBuild: fc.constant<string[]>([]),
  }),
);

describe('properties', () => {
  it("refuses another frame's repository wherever it is used, whatever the Engine answers", () => {
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 6 }),
        fc.nat(),
        otherRepo,
        fc.constantFrom(
          'FROM %',
          'COPY --from=% /a /b',
          'RUN --mount=type=bind,from=%,target=/x x',
        ),
        anyLookup,
        (before, at, ref, use, answer) => {
          const lines = ['FROM scratch', ...before];
          lines.splice(1 + (at % lines.length), 0, use.replace('%', ref));
          const refusals = refusalsOf(parseDockerfile(lines.join('\n')), FRAME, () => answer);
          expect(refusals.some((r) => /another frame's/.test(r.reason))).toBe(true);
        },
      ),
    );
  });

  it("refuses an image with no name outside frameplane/ that is not the frame's own", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(`${OTHER}:1`, 'localhost:5000/frameplane/zz:2', '<none>:<none>')),
        fc.constantFrom(undefined, 'SOMEONE'),
        fc.constantFrom('FROM %', 'FROM scratch\nCOPY --from=% /a /b'),
        fc.constantFrom(ID, `sha256:${ID}`, 'abc123', 'local/node:20'),
        (names, frame, use, ref) => {
          const answer: Lookup = { found: true, names, frame, onBuild: [] };
          const refusals = refusalsOf(parseDockerfile(use.replace('%', ref)), FRAME, () => answer);
          expect(refusals).toHaveLength(1);
        },
      ),
    );
  });

  it('refuses an ADD of a URL however it is quoted or escaped', () => {
    const noise = fc.constantFrom('"', "'", '\\', '');
    fc.assert(
      fc.property(
        fc.constantFrom('http://127.0.0.1:8080/x', 'https://example.test/a.tgz', 'git@host:r.git'),
        fc.array(fc.tuple(fc.nat(), noise), { maxLength: 4 }),
        (url, inserts) => {
          let src = url;
          for (const [at, c] of inserts) {
            const k = at % (src.length + 1);
            src = src.slice(0, k) + c + src.slice(k);
          }
          if (src.endsWith('\\')) src += 'x';
          const refusals = refusalsOf(
            parseDockerfile(`FROM scratch\nADD ${src} /dst\n`),
            FRAME,
            () => operator,
          );
          expect(refusals.length).toBeGreaterThan(0);
        },
      ),
    );
  });
});
