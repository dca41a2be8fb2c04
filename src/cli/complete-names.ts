// `frameplane __complete <kind> [prefix]`: the names a completion script offers (completion.ts)
// for a project, a frame (of --project, or of the only project) or a team (its slug), one a
// line. A TAB must not wait on the network each time, so the answer is kept 30 s in the config
// directory, one file per service, user (a hash of the token, never the token) and question.
// Not logged in, offline, slow (3 s) or refused: it prints nothing and exits 0, as a TAB that
// finds nothing would.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Argument, type Command } from 'commander';
import type { Frameplane } from '../sdk/index.ts';
import { readLogin, configPath } from './config.ts';
import { context, type GlobalOptions } from './context.ts';
import { projectId } from './resolve.ts';

export const KINDS = ['project', 'frame', 'team'] as const;
type Kind = (typeof KINDS)[number];
const FRESH_MS = 30_000;
const GIVE_UP_MS = 3_000;

const limit = 200;
const projects = (fp: Frameplane) =>
  fp.all((cursor) => fp.api.GET('/v2/projects', { params: { query: { cursor, limit } } }));

async function frameNames(fp: Frameplane, project: string | undefined): Promise<string[]> {
  let project_id: string | undefined;
  if (project) project_id = await projectId(fp, project);
  else {
    // Without --project, a frame name is only worth offering when one project holds it.
    const all = await projects(fp);
    if (all.length !== 1) return [];
    project_id = all[0]?.id;
  }
  if (!project_id) return [];
  const path = { project_id };
  const frames = await fp.all((cursor) =>
    fp.api.GET('/v2/projects/{project_id}/frames', { params: { path, query: { cursor, limit } } }),
  );
  return frames.map((f) => f.name);
}

async function namesOf(fp: Frameplane, kind: Kind, project?: string): Promise<string[]> {
  if (kind === 'project') return (await projects(fp)).map((p) => p.name);
  if (kind === 'team') {
    const teams = await fp.all((cursor) =>
      fp.api.GET('/v2/teams', { params: { query: { cursor, limit } } }),
    );
    return teams.map((t) => t.slug);
  }
  return frameNames(fp, project);
}

/** The cache file of one question, for one service and user. */
function cacheFile(server: string, token: string, kind: Kind, project = ''): string {
  const key = createHash('sha256').update([server, token, kind, project].join('\n'));
  return join(dirname(configPath()), 'completion', `${key.digest('hex').slice(0, 32)}.txt`);
}

function cached(file: string): string[] | undefined {
  try {
    if (Date.now() - statSync(file).mtimeMs > FRESH_MS) return undefined;
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return undefined;
  }
}

function keep(file: string, names: string[]) {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, names.map((n) => `${n}\n`).join(''), { mode: 0o600 });
}

async function complete(kind: Kind, prefix: string, project: string | undefined, cmd: Command) {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  const { fp, server } = context(cmd);
  const token = opts.token ?? process.env.FRAMEPLANE_TOKEN ?? readLogin()?.token ?? '';
  const file = cacheFile(server, token, kind, project);
  let names = cached(file);
  if (!names) {
    names = [...new Set(await namesOf(fp, kind, project))].sort();
    keep(file, names);
  }
  for (const n of names) if (n.startsWith(prefix)) process.stdout.write(`${n}\n`);
}

export function register(program: Command) {
  program
    .command('__complete', { hidden: true })
    .description('the names a completion script offers')
    .addArgument(new Argument('<kind>').choices(KINDS))
    .argument('[prefix]', 'what is typed so far', '')
    .option('-p, --project <project>', 'the project of the frames')
    .action(async (kind: Kind, prefix: string, opts: { project?: string }, cmd: Command) => {
      setTimeout(() => process.exit(0), GIVE_UP_MS).unref();
      try {
        await complete(kind, prefix, opts.project, cmd);
      } catch {
        // Not logged in, offline or refused: nothing to offer.
      }
    });
}
