// A frame's log lines as text, for GET …/logs/download: one line a line, read in keyset pages
// so that the whole download is never held in memory, and the page's rows leave before the next
// is read.
import type { LogRow } from './history-dal.ts';

const PAGE = 1000;

/** `<at> <source>[<replica>] <line>`: like `heroku logs`, the line last so that it can be cut. */
export const textLine = (r: LogRow) =>
  `${r.at.toISOString()} ${r.source}[${r.replica}] ${r.line}\n`;

/** Every row `page` answers after a position, as text chunks of one page each. */
export async function* logText(
  page: (after: string | undefined, limit: number) => Promise<LogRow[]>,
): AsyncGenerator<string> {
  let after: string | undefined;
  for (;;) {
    const rows = await page(after, PAGE);
    if (rows.length > 0) yield rows.map(textLine).join('');
    if (rows.length < PAGE) return;
    after = String(rows[rows.length - 1]?.id);
  }
}
