// Output: tables for people, JSON for scripts (--json: stdout holds one JSON value and nothing
// else), colour only when stdout is a terminal and NO_COLOR is unset.
const colourOn = (stream: NodeJS.WriteStream) =>
  stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';

const CODES = { green: 32, red: 31, yellow: 33, dim: 2, bold: 1 } as const;
export type Colour = keyof typeof CODES;

export function paint(
  text: string,
  colour: Colour,
  stream: NodeJS.WriteStream = process.stdout,
): string {
  return colourOn(stream) ? `\x1b[${CODES[colour]}m${text}\x1b[0m` : text;
}

/** The colour a frame status is shown in. */
export function statusColour(status: string): Colour {
  if (status === 'Online') return 'green';
  if (status === 'Error' || status === 'Suspended') return 'red';
  if (status === 'Stopped') return 'dim';
  return 'yellow';
}

export type Row = Record<string, string | number | boolean | null | undefined>;

/** Left-aligned columns under upper-case headings; `colour` paints one column's cells. */
export function table(
  rows: Row[],
  columns: string[],
  colour?: Record<string, (v: string) => Colour>,
) {
  if (rows.length === 0) {
    process.stdout.write(`${paint('(none)', 'dim')}\n`);
    return;
  }
  const cell = (row: Row, c: string) =>
    row[c] === null || row[c] === undefined ? '-' : String(row[c]);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)));
  const line = (cells: string[], paints: Array<Colour | undefined>) =>
    cells
      .map((text, i) => {
        const padded = i === cells.length - 1 ? text : text.padEnd(widths[i] ?? 0);
        const p = paints[i];
        return p ? paint(padded, p) : padded;
      })
      .join('  ')
      .trimEnd();
  const out = [
    line(
      columns.map((c) => c.toUpperCase()),
      columns.map(() => 'bold'),
    ),
  ];
  for (const row of rows)
    out.push(
      line(
        columns.map((c) => cell(row, c)),
        columns.map((c) => colour?.[c]?.(cell(row, c))),
      ),
    );
  process.stdout.write(`${out.join('\n')}\n`);
}

/** One thing as "key: value" lines. */
export function details(row: Row) {
  const width = Math.max(...Object.keys(row).map((k) => k.length));
  for (const [k, v] of Object.entries(row))
    process.stdout.write(`${paint(`${k}:`.padEnd(width + 1), 'bold')} ${v ?? '-'}\n`);
}

export function printJson(value: unknown) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A message for the person at the terminal; stderr, so that stdout stays the result. */
export function note(message: string) {
  process.stderr.write(`${message}\n`);
}
