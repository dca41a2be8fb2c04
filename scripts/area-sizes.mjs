// Fails when a folder of src/ holds more than LIMIT .ts files and docs/architecture.md does
// not list it, with its reason, under "Area sizes"; or when a listed folder is no longer large
// (the list stays true). Each folder counts its own files: a subfolder is an area of its own.
// Run by `npm run lint:deps`, after dependency-cruiser, which checks imports but cannot count.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const LIMIT = 15;
const DOC = 'docs/architecture.md';

/** The folders listed under the doc's "Area sizes" heading, as `- \`src/x/\`: why`. */
function listed() {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf('\n### Area sizes\n');
  if (start < 0) throw new Error(`${DOC} has no "### Area sizes" section`);
  const rest = text.slice(start + 1);
  const end = rest.slice(1).search(/\n#{1,3} /);
  const section = end < 0 ? rest : rest.slice(0, end + 1);
  return new Set([...section.matchAll(/^- `(src\/[^`]+?)\/?`/gm)].map((m) => m[1]));
}

/** Every folder under src/ with its number of .ts files. */
function sizes(dir, out = new Map()) {
  const entries = readdirSync(dir, { withFileTypes: true });
  out.set(dir, entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).length);
  for (const e of entries) if (e.isDirectory()) sizes(join(dir, e.name), out);
  return out;
}

const allowed = listed();
const problems = [];
const all = sizes('src');
all.delete('src'); // the root holds the shared modules (clock.ts, ids.ts…), not an area
for (const [dir, n] of all) {
  if (n > LIMIT && !allowed.has(dir))
    problems.push(
      `${dir}/ holds ${n} .ts files (at most ${LIMIT}): split it, or list it with why under "Area sizes" in ${DOC}`,
    );
  if (n <= LIMIT && allowed.has(dir))
    problems.push(`${dir}/ holds ${n} .ts files now: take it off the "Area sizes" list in ${DOC}`);
}
for (const dir of allowed)
  if (!all.has(dir))
    problems.push(`${dir}/ is listed under "Area sizes" in ${DOC} but does not exist`);

if (problems.length) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
const large = [...allowed].map((d) => `${d}/ ${all.get(d)}`).join(', ');
console.log(`area sizes: every folder of src/ holds at most ${LIMIT} .ts files, but ${large}`);
