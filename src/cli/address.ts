// What the CLI says of where a frame answers (CONTRACT 5b): its URL, or, when the API answers
// `url: null`, why there is none and the hostname it will have once its agent serves an edge.
import type { Schemas } from '../sdk/index.ts';
import { note } from './output.ts';

type Frame = Schemas['Frame'];

/** Why `f` has no URL: its agent serves no edge (or has never said that it does). */
export function noUrl(f: Frame): string {
  const fix = f.runtime.kind === 'agent' ? ' (`frameplane agent --edge-port PORT` serves one)' : '';
  return `${f.name} has no URL: its agent has no edge${fix}. Its hostname: ${f.hostname}`;
}

/** The URL cell of `frames show`. */
export const urlCell = (f: Frame) => f.url ?? 'none: its agent has no edge';

/** The URL alone on stdout (a script may capture it), or on stderr why there is none. */
export function printUrl(f: Frame) {
  if (f.url) process.stdout.write(`${f.url}\n`);
  else note(noUrl(f));
}
