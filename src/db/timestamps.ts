// Timestamps in and out, by hand, because every row of a list carries some and a page of them
// spends a noticeable part of its time converting them. In: PostgreSQL's text form of a
// timestamptz ("2026-11-22 05:40:01.123456+00") into a Date, installed as pg's type parser in
// place of its own (postgres-date), which runs regular expressions over every value; it still
// gets whatever this one does not handle (BC dates, infinity, odd offsets). Out: a Date as
// RFC 3339 in UTC, exactly as Date#toISOString() writes it, with less work. Both are held
// against the originals by property tests (test/db/timestamps.test.ts); that pg uses this
// parser is pinned in test/db/library-internals.test.ts.
import pg from 'pg';

const defaultParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);

function digits(s: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    value = value * 10 + d;
  }
  return value;
}

const at = (s: string, i: number, c: string) => s.charCodeAt(i) === c.charCodeAt(0);

export function parseTimestamptz(s: string): Date {
  // YYYY-MM-DD HH:MM:SS, then an optional fraction, then ±HH, ±HH:MM or ±HH:MM:SS.
  if (
    s.length < 22 ||
    !at(s, 4, '-') ||
    !at(s, 7, '-') ||
    !at(s, 10, ' ') ||
    !at(s, 13, ':') ||
    !at(s, 16, ':')
  )
    return defaultParser(s) as Date;
  let i = 19;
  let ms = 0;
  if (at(s, i, '.')) {
    // Milliseconds: the first three digits; a Date keeps no more.
    let scale = 100;
    for (i++; i < s.length; i++) {
      const d = s.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      ms += d * scale;
      scale /= 10;
    }
    ms = Math.trunc(ms);
  }
  const sign = at(s, i, '+') ? 1 : at(s, i, '-') ? -1 : 0;
  const rest = s.length - i - 1;
  if (
    sign === 0 ||
    !(
      rest === 2 ||
      (rest === 5 && at(s, i + 3, ':')) ||
      (rest === 8 && at(s, i + 3, ':') && at(s, i + 6, ':'))
    )
  ) {
    return defaultParser(s) as Date;
  }
  const year = digits(s, 0, 4);
  const offsetSeconds =
    digits(s, i + 1, 2) * 3600 +
    (rest >= 5 ? digits(s, i + 4, 2) * 60 : 0) +
    (rest === 8 ? digits(s, i + 7, 2) : 0);
  const time =
    Date.UTC(
      year,
      digits(s, 5, 2) - 1,
      digits(s, 8, 2),
      digits(s, 11, 2),
      digits(s, 14, 2),
      digits(s, 17, 2),
      ms,
    ) -
    sign * offsetSeconds * 1000;
  // Years before 100 (Date.UTC maps them to 19xx) and anything malformed: the default parser.
  return Number.isNaN(time) || year < 100 ? (defaultParser(s) as Date) : new Date(time);
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);
const DAY = 86_400_000;

/** Date#toISOString() for years 0000-9999 (anything else goes to it). */
export function isoString(d: Date): string {
  const t = d.getTime();
  if (!(t >= -62_167_219_200_000 && t < 253_402_300_800_000)) return d.toISOString();
  const days = Math.floor(t / DAY);
  let ms = t - days * DAY;
  // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(ms / 3_600_000);
  ms -= h * 3_600_000;
  const m = Math.floor(ms / 60_000);
  ms -= m * 60_000;
  const sec = Math.floor(ms / 1000);
  ms -= sec * 1000;
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(m)}:${pad2(sec)}.${pad3(ms)}Z`;
}
