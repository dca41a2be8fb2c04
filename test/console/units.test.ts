// The metrics charts' numbers with their units (console/src/components/units.ts): bytes in
// binary units, an axis's unit from the step between its ticks, three significant digits.
import { describe, expect, it } from 'vitest';
import { axisUnit, num, tick, withUnit } from '../../console/src/components/units.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

describe('units of the metrics charts', () => {
  it.each([
    ['bytes', 0, '0 B'],
    ['bytes', 1023, '1,023 B'],
    ['bytes', MiB, '1 MiB'],
    ['bytes', 320 * MiB, '320 MiB'],
    ['bytes', 1.5 * GiB, '1.5 GiB'],
    ['bytes/s', 4 * KiB, '4 KiB/s'],
    ['cores', 0.125, '0.125 cores'],
    ['cores', 1, '1 core'],
    ['req/s', 0.1, '0.1 req/s'],
    ['ms', 180, '180 ms'],
    ['ms', null, '—'],
  ] as const)('%s %s → %s', (unit, v, text) => {
    expect(withUnit(unit, v)).toBe(text);
  });

  it.each([
    ['bytes', 500 * MiB, 1000 * MiB, 'MiB', '1,000'],
    ['bytes', GiB, 2 * GiB, 'GiB', '2'],
    ['bytes/s', 10 * KiB, 40 * KiB, 'KiB/s', '40'],
    ['cores', 0.5, 1.5, 'cores', '1.5'],
  ] as const)('an axis of %s by %s: the tick %s reads %s %s', (unit, by, v, name, label) => {
    expect(axisUnit(unit, by)).toBe(name);
    expect(tick(unit, v, by)).toBe(label);
  });

  it('keeps three significant digits below 100, whole numbers above', () => {
    expect([0.30000000000000004, 0.0042, 12.345, 1234.5].map(num)).toEqual([
      '0.3',
      '0.0042',
      '12.3',
      '1,235',
    ]);
  });
});
