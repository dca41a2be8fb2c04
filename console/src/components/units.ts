// Numbers with their units, for the metrics charts' axes, legends and summaries: bytes in
// binary units (KiB, MiB, GiB), the others as they come (cores, req/s, ms), and times.
export type Unit = 'cores' | 'bytes' | 'bytes/s' | 'req/s' | 'ms';

const BINARY = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** Three significant digits below 100 (0.125, 12.3), whole numbers above (1,234). */
export function num(v: number) {
  const whole = Math.abs(v) >= 100;
  return new Intl.NumberFormat(
    undefined,
    whole ? { maximumFractionDigits: 0 } : { maximumSignificantDigits: 3 },
  ).format(v);
}

/** The power of 1024 that shows `bytes` as at least 1 of a unit (0: bytes). */
function powerOf(bytes: number) {
  let p = 0;
  while (p < BINARY.length - 1 && Math.abs(bytes) >= 1024 ** (p + 1)) p++;
  return p;
}

const perSecond = (unit: Unit) => (unit === 'bytes/s' ? '/s' : '');
const isBytes = (unit: Unit) => unit === 'bytes' || unit === 'bytes/s';

/** What an axis counts in, bytes in the largest unit `by` is 1 or more of: "MiB", "KiB/s",
 *  "cores", "ms". */
export function axisUnit(unit: Unit, by: number) {
  return isBytes(unit) ? `${BINARY[powerOf(by)]}${perSecond(unit)}` : unit;
}

/** An axis's tick in the unit axisUnit names for the same `by` (the unit is the label's). */
export function tick(unit: Unit, v: number, by: number) {
  return num(isBytes(unit) ? v / 1024 ** powerOf(by) : v);
}

/** One value with its unit: "120 MiB", "1.5 KiB/s", "0.25 cores", "1 core", "4.2 ms". */
export function withUnit(unit: Unit, v: number | null | undefined) {
  if (v === null || v === undefined) return '—';
  if (isBytes(unit)) return `${tick(unit, v, v)} ${axisUnit(unit, v)}`;
  if (unit === 'cores' && v === 1) return '1 core';
  return `${num(v)} ${unit}`;
}

/** The steps between an axis's ticks for bytes: 1, 2, 5, 10, 20… of B, KiB, MiB, GiB, TiB,
 *  so that the ticks are round in the unit shown rather than in powers of ten of bytes. */
export const BYTE_STEPS = BINARY.flatMap((_, p) =>
  [1, 2, 5, 10, 20, 50, 100, 200, 500].map((m) => m * 1024 ** p),
);

/** A point's time: the hour and minute, with the day too over ranges longer than a day. */
export function stamp(seconds: number, spanSeconds: number) {
  const withDay = spanSeconds > 86_400;
  return new Date(seconds * 1000).toLocaleString(undefined, {
    ...(withDay ? { month: 'short', day: 'numeric' } : {}),
    hour: 'numeric',
    minute: '2-digit',
  });
}
