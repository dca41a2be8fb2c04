// The link of a directory to a project (and a frame): `.frameplane.json`, found from the
// current directory upwards as git finds .git, so that commands run anywhere in a checkout.
// JSON, like Vercel's .vercel/project.json: the CLI reads it with no parser to depend on. Ids
// do the work; names sit beside them for the people who read the file.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CliError, EXIT } from './exit-codes.ts';

export const LINK_FILE = '.frameplane.json';

interface Named {
  id: string;
  name: string;
}

export interface Link {
  /** The service the ids belong to: another one would not know them. */
  server: string;
  project: Named;
  frame?: Named;
}

export interface FoundLink {
  path: string;
  link: Link;
}

const isNamed = (v: unknown): v is Named =>
  typeof (v as Named)?.id === 'string' && typeof (v as Named)?.name === 'string';

function parse(path: string): Link {
  const broken = (why: string) =>
    new CliError(`${path}: ${why}; fix it, or run \`frameplane link\` again`, EXIT.usage);
  let value: Partial<Link>;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw broken(`not JSON (${(err as Error).message})`);
  }
  if (typeof value?.server !== 'string' || !isNamed(value.project))
    throw broken('needs "server" and "project": {"id", "name"}');
  if (value.frame !== undefined && !isNamed(value.frame))
    throw broken('"frame" needs "id" and "name"');
  return value as Link;
}

/** The link that applies in `from`: the nearest .frameplane.json in it or above it. */
export function findLink(from = process.cwd()): FoundLink | undefined {
  let dir = resolve(from);
  for (;;) {
    const path = join(dir, LINK_FILE);
    if (existsSync(path)) return { path, link: parse(path) };
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Writes the link into `dir` (the current directory), replacing one that was there. */
export function writeLink(link: Link, dir = process.cwd()): string {
  const path = join(dir, LINK_FILE);
  writeFileSync(path, `${JSON.stringify(link, null, 2)}\n`);
  return path;
}

export function removeLink(path: string) {
  rmSync(path, { force: true });
}
