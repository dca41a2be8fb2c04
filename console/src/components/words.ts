// What the API says in codes, said in words: a frame's status reason, a deployment's failure,
// an event's type, and times. The code stays available as a title (the API's docs name it).
import { eventText as sharedEventText, reasonWords } from '../../../src/sdk/event-text.ts';
import type { FrameEvent } from '../data/frames.ts';

/** A reason code in words, as the CLI says it, capitalized. */
export const inWords = (code: string) => capitalized(reasonWords(code));

const capitalized = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** "Reason: message" when there is a message, the reason alone when not (no dangling colon). */
export function reasonText(reason: string | null | undefined, message?: string | null) {
  if (!reason) return message ?? '';
  return message ? `${inWords(reason)}: ${message}` : inWords(reason);
}

/** An event in one line, as the CLI prints it (one function, src/sdk/event-text.ts), and the
 *  status it led to when the words do not say it already. */
export function eventText(e: FrameEvent) {
  const status = e.type !== 'status' && e.status ? ` → ${e.status}` : '';
  return `${capitalized(sharedEventText(e))}${status}`;
}

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

/** How long ago, roughly ("5 minutes ago"); the exact time is for a title. */
export function ago(iso: string, now = Date.now()) {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  for (const [unit, size] of UNITS)
    if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit);
  return relative.format(0, 'second'); // "now"
}

export const dateTime = (iso: string) => new Date(iso).toLocaleString();
export const time = (iso: string) => new Date(iso).toLocaleTimeString();
export const shortSha = (sha: string) => sha.slice(0, 7);
