// What a tenant's Dockerfile may use, decided before the Engine builds it. Every build of every
// tenant runs on the same Engine, whose image store holds all their images and their builds'
// untagged layers; image names and ids show in build logs, so they are no secret. The rule:
//  - a stage's FROM, COPY --from and RUN --mount from= name an earlier stage, `scratch`, or an
//    image that is this frame's own or that the operator pulled or tagged (a name outside
//    frameplane/), or one the Engine does not have and pulls from its registry;
//  - never another frame's repository (frameplane/… other than imageRepo(frameId), with or
//    without a registry), an untagged image of someone's build, nor another frame's image by id;
//  - no ADD from a URL or git: the Engine fetches those itself, from the host's network;
//  - no image or ONBUILD whose triggers would do either of the above in this build.
// imageUses and judgeImage are pure: the Engine is asked about each use by image-lookup.ts.
import { builderFlags, splitInstruction, type ParsedDockerfile } from './dockerfile-parse.ts';
import {
  familiarName,
  inNamespace,
  isFramesRepo,
  isImageId,
  parseReference,
} from './image-reference.ts';

/** An image a build would read, where the Dockerfile names it. */
export interface ImageUse {
  line: number;
  /** How it is named there: `FROM`, `COPY --from`, `RUN --mount from`. */
  via: string;
  ref: string;
}

export interface Refusal {
  line: number;
  reason: string;
}

/** What the Engine holds under a reference, as image-lookup.ts asks it. */
export type Lookup =
  | {
      found: true;
      /** Its RepoTags and RepoDigests. */
      names: string[];
      /** The frameplane.frame label, if any. */
      frame?: string;
      onBuild: string[];
    }
  | { found: false; why: string };

const REF_CHARS = /^[A-Za-z0-9._/:@-]+$/;
const STAGE_NAME = /^[a-z][a-z0-9-_.]*$/;

/** The images a Dockerfile uses and the refusals that need no look-up. */
export function imageUses(df: ParsedDockerfile, frameId: string) {
  const uses: ImageUse[] = [];
  const refusals: Refusal[] = [];
  const stages: string[] = []; // the names of the stages before the current one
  let stage = -1;
  let stageName = '';
  let meta: MetaArgs = { vars: new Map() }; // the ARGs before the first FROM
  const refuse = (line: number, reason: string) => refusals.push({ line, reason });
  const image = (line: number, via: string, ref: string) => {
    const r = parseReference(ref);
    if (!r && !isImageId(ref)) return refuse(line, `${via} ${ref} is not an image reference`);
    if (r && inNamespace(r) && !isFramesRepo(r, frameId))
      return refuse(line, `${via} ${ref} names another frame's images`);
    uses.push({ line, via, ref });
  };
  // COPY --from and RUN --mount from=: an earlier stage by name or index, else an image.
  const from = (line: number, via: string, value: string) => {
    if (!REF_CHARS.test(value))
      return refuse(line, `${via}=${value}: write a stage name or an image reference plainly`);
    const index = /^[+-]?\d+$/.test(value) ? Number(value) : Number.NaN;
    if (stages.includes(value.toLowerCase()) || (index >= 0 && index < stage)) return;
    image(line, via, value);
  };
  const fromLine = (line: number, flags: string[], args: string) => {
    if (stage >= 0) stages.push(stageName);
    stage++;
    stageName = '';
    if (flags.length)
      return refuse(line, 'FROM --platform: Frameplane builds for the machine the agent runs on');
    const words = args.split(/[\t\v\f\r ]+/).filter(Boolean);
    if (!(words.length === 1 || (words.length === 3 && words[1]?.toLowerCase() === 'as')))
      return refuse(line, 'FROM takes an image and optionally AS <name>');
    stageName = words[2]?.toLowerCase() ?? '';
    if (words.length === 3 && !STAGE_NAME.test(stageName))
      refuse(line, `${stageName} is not a stage name`);
    const ref = expand(words[0] as string, meta.vars, meta.unreadable);
    if (ref === undefined)
      return refuse(
        line,
        `FROM ${words[0]}: write the image plainly (no quotes or escapes), with variables only ` +
          'of ARGs above the first FROM that have a value',
      );
    if (ref !== 'scratch' && !stages.includes(ref.toLowerCase())) image(line, 'FROM', ref);
  };

  for (const ins of df.instructions) {
    if (stage < 0 && ins.keyword === 'ARG') {
      meta = metaArgs(ins.rest, meta, ins.line);
      continue;
    }
    const { flags, args, spacedValue } = builderFlags(ins.rest);
    if (spacedValue && ['FROM', 'COPY', 'ADD', 'RUN'].includes(ins.keyword)) {
      refuse(ins.line, `write the flags of ${ins.keyword} as --name=value`);
      continue;
    }
    if (ins.keyword === 'FROM') fromLine(ins.line, flags, args);
    for (const [name, value] of flagPairs(flags)) {
      if (name === 'from' && (ins.keyword === 'COPY' || ins.keyword === 'ADD'))
        from(ins.line, `${ins.keyword} --from`, value);
      if (name === 'mount' && ins.keyword === 'RUN') {
        const source = mountSource(value);
        if (source === null) refuse(ins.line, 'RUN --mount: write its options without quotes');
        else if (source !== undefined) from(ins.line, 'RUN --mount from', source);
      }
    }
    if (ins.keyword === 'ADD') {
      const why = remoteAdd(args);
      if (why) refuse(ins.line, why);
    }
    if (ins.keyword === 'ONBUILD') {
      const why = triggerProblem(ins.rest);
      if (why) refuse(ins.line, `ONBUILD ${why}`);
    }
  }
  return { uses, refusals };
}

/** Whether the Engine may build with an image it answered this about. */
export function judgeImage(use: ImageUse, found: Lookup, frameId: string): Refusal | undefined {
  const refuse = (why: string) => ({ line: use.line, reason: `${use.via} ${use.ref}: ${why}` });
  if (!found.found) return refuse(found.why);
  const names = found.names.map((n) => parseReference(n)).filter((r) => r !== undefined);
  const own = names.some((r) => isFramesRepo(r, frameId));
  const others =
    (found.frame !== undefined && found.frame !== frameId) ||
    names.some((r) => inNamespace(r) && !isFramesRepo(r, frameId));
  if (!own && !names.some((r) => !inNamespace(r)))
    return refuse(
      "an image built here that is not this frame's, nor pulled or tagged by the operator",
    );
  const ref = parseReference(use.ref);
  const byName = ref !== undefined && !ref.digest && found.names.includes(familiarName(ref));
  if (!byName && others && !own) return refuse("another frame's image, named by id or digest");
  for (const trigger of found.onBuild) {
    const why = triggerProblem(trigger);
    if (why) return refuse(`its ONBUILD trigger ${trigger} ${why}`);
  }
  return undefined;
}

/** All refusals of a Dockerfile, given the Engine's answer for each image it uses. */
export function refusalsOf(
  df: ParsedDockerfile,
  frameId: string,
  lookup: (ref: string) => Lookup,
): Refusal[] {
  const { uses, refusals } = imageUses(df, frameId);
  const judged = uses.map((u) => judgeImage(u, lookup(u.ref), frameId));
  return [...refusals, ...judged.filter((r) => r !== undefined)].sort((a, b) => a.line - b.line);
}

interface MetaArgs {
  vars: Map<string, string>;
  /** The line of an ARG written in a form this module does not read, if any. */
  unreadable?: number;
}

// ARGs before the first FROM are the only variables FROM sees. A value is read when it is plain,
// "double-quoted" or 'single-quoted' without escapes; anything else makes every later variable
// in a FROM unreadable rather than guessed.
function metaArgs(rest: string, g: MetaArgs, line: number): MetaArgs {
  const vars = new Map(g.vars);
  for (const word of rest.split(/[\t\v\f\r ]+/).filter(Boolean)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(word);
    if (!m) return { vars, unreadable: g.unreadable ?? line };
    const [, name = '', raw] = m;
    let value: string | undefined = '';
    if (raw === undefined || raw === '') value = '';
    else if (/^'[^'\\`"]*'$/.test(raw)) value = raw.slice(1, -1);
    else if (/^"[^'\\`"]*"$/.test(raw)) value = expand(raw.slice(1, -1), vars, undefined, true);
    else value = expand(raw, vars, undefined, true);
    if (value === undefined) return { vars, unreadable: g.unreadable ?? line };
    vars.set(name, value);
  }
  return { ...g, vars };
}

/**
 * A word with $NAME, ${NAME}, ${NAME:-word} and ${NAME:+word} replaced as the Engine does,
 * or undefined for anything else (quotes, escapes, other forms, a variable never declared).
 */
export function expand(
  word: string,
  vars: ReadonlyMap<string, string>,
  unreadable?: number,
  anyChars = false,
): string | undefined {
  let out = '';
  for (let i = 0; i < word.length; ) {
    const c = word[i] as string;
    if (c !== '$') {
      if (!anyChars && !REF_CHARS.test(c)) return undefined;
      if (anyChars && /['"\\`${}]/.test(c)) return undefined;
      out += c;
      i++;
      continue;
    }
    if (unreadable !== undefined) return undefined;
    const m =
      /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(word.slice(i)) ??
      /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([A-Za-z0-9._/:@-]*))?\}/.exec(word.slice(i));
    if (!m) return undefined;
    const [all, name = '', op, alt = ''] = m;
    const value = vars.get(name);
    if (op === '-') out += value ? value : alt;
    else if (op === '+') out += value ? alt : '';
    else if (value === undefined) return undefined;
    else out += value;
    i += all.length;
  }
  return out;
}

function* flagPairs(flags: string[]): Generator<[string, string]> {
  for (const f of flags) {
    const body = f.replace(/^--/, '');
    const eq = body.indexOf('=');
    if (eq > 0) yield [body.slice(0, eq).toLowerCase(), body.slice(eq + 1)];
  }
}

/** The from= of a --mount; undefined when it has none, null when quoted (CSV the check skips). */
function mountSource(value: string): string | null | undefined {
  if (/["']/.test(value)) return null;
  for (const field of value.split(',')) {
    const eq = field.indexOf('=');
    if (eq > 0 && field.slice(0, eq).trim().toLowerCase() === 'from') return field.slice(eq + 1);
  }
  return undefined;
}

const REMOTE = /[a-z0-9+.-]+:\/\/|git@|(?:^|[\s,["'])github\.com\//i;

/** Why an ADD's sources must not be used, if they are a URL or could become one. */
export function remoteAdd(args: string): string | undefined {
  const plain = args.replace(/["'\\`]/g, '');
  let json: string[] = [];
  try {
    const parsed: unknown = JSON.parse(args);
    if (Array.isArray(parsed)) json = parsed.filter((s) => typeof s === 'string');
  } catch {
    /* the shell form */
  }
  if ([args, plain, ...json].some((s) => REMOTE.test(s)))
    return (
      'ADD from a URL or git: the Engine fetches it from the host itself; ' +
      'fetch it in a RUN step instead'
    );
  if ([args, ...json].some((s) => s.includes('$')))
    return 'ADD with a variable in its arguments: name local files plainly, or use COPY';
  return undefined;
}

/** Why an ONBUILD trigger must not run in a build here, if it copies from an image or a URL. */
export function triggerProblem(trigger: string): string | undefined {
  const { keyword, rest } = splitInstruction(trigger);
  const { flags, args, spacedValue } = builderFlags(rest);
  if (spacedValue) return 'writes a flag as --name value';
  for (const [name, value] of flagPairs(flags)) {
    if (name === 'from') return 'copies from another image or stage';
    if (name === 'mount' && mountSource(value) !== undefined)
      return 'mounts another image or stage';
  }
  if (keyword === 'ADD') return remoteAdd(args);
  if (keyword === 'ONBUILD') return triggerProblem(rest);
  return undefined;
}
