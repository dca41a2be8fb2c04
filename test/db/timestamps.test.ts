// The hand-written timestamp parser and formatter against the ones they replace: pg's own
// parser (postgres-date) and Date#toISOString(), on tables, on generated values, and on what a
// real PostgreSQL sends in several session time zones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pg from 'pg';
import { createRequire } from 'node:module';
import { isoString, parseTimestamptz } from '../../src/db/timestamps.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';

// pg's own parser, which ships without type declarations.
const parseDate = createRequire(import.meta.url)('postgres-date') as (
  text: string,
) => Date | number;

const same = (text: string) => {
  const expected = parseDate(text) as Date | number;
  const got = parseTimestamptz(text);
  expect(String(got.valueOf()), text).toBe(String(expected.valueOf()));
};

describe('parseTimestamptz', () => {
  it.each([
    '2026-11-22 05:40:01.123456+00',
    '2026-11-22 05:40:01+00',
    '2026-11-22 05:40:01.5-07',
    '2026-11-22 05:40:01.12+05:30',
    '1900-01-01 00:00:00+00:19:32',
    '1970-01-01 00:00:00+00',
    '1969-12-31 23:59:59.999999+00',
    '0099-06-01 00:00:00+00',
    '0005-01-01 00:00:00+00',
    '2026-11-22 05:40:01.123456+00 BC',
    'infinity',
    '-infinity',
    '9999-12-31 23:59:59.999+14',
  ])('reads %s as postgres-date does', same);

  it('agrees with postgres-date on generated values', () => {
    const two = (n: number) => String(n).padStart(2, '0');
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 9999 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 28 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        fc.integer({ min: 0, max: 59 }),
        fc.option(fc.stringMatching(/^[0-9]{1,6}$/)),
        fc.constantFrom('+', '-'),
        fc.integer({ min: 0, max: 15 }),
        fc.constantFrom('', ':30', ':45', ':19:32'),
        (y, mo, d, h, mi, s, fraction, sign, oh, om) => {
          same(
            `${String(y).padStart(4, '0')}-${two(mo)}-${two(d)} ${two(h)}:${two(mi)}:${two(s)}${fraction === null ? '' : `.${fraction}`}${sign}${two(oh)}${om}`,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('isoString', () => {
  it('writes what toISOString writes', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0000-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59.999Z'),
          noInvalidDate: true,
        }),
        (d) => {
          expect(isoString(d)).toBe(d.toISOString());
        },
      ),
      { numRuns: 5000 },
    );
    for (const d of [
      new Date(0),
      new Date(-1),
      new Date('2000-02-29T23:59:59.999Z'),
      new Date('+010000-01-01T00:00:00Z'),
    ]) {
      expect(isoString(d)).toBe(d.toISOString());
    }
    expect(() => isoString(new Date(NaN))).toThrow(RangeError);
  });
});

describe('what PostgreSQL sends', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: await freshDatabaseUrl() });
    await client.connect();
  });
  afterAll(() => client.end());

  it.each([
    'UTC',
    'America/Los_Angeles',
    'Asia/Kolkata',
    'Australia/Lord_Howe',
    'Europe/Amsterdam',
  ])('is read alike in the %s time zone', async (zone) => {
    await client.query(`set time zone '${zone}'`);
    const { rows } = await client.query<{ t: string }>({
      text: `select t::text from (values ('2026-11-22 05:40:01.123456+00'::timestamptz), ('1970-01-01 00:00:00+00'), ('1899-12-31 23:59:59.5+00'),
        ('2026-03-29 01:30:00+00'), ('0099-01-01 00:00:00+00'), ('infinity'), ('2000-01-01 00:00:00 BC')) v(t)`,
    });
    for (const { t } of rows) same(t);
  });
});
