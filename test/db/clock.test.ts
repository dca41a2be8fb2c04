// The test clock's offset is shared through the database, and only a service started with
// TEST_CLOCK=1 follows it: one started without ignores a stored offset and clears it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.ts';
import { discardTestClockOffset, systemClock } from '../../src/clock.ts';
import { readClockOffset } from '../../src/db/clock-dal.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';

let db: Database;
const HOUR_MS = 3_600_000;

beforeAll(async () => {
  db = createDatabase(await freshDatabaseUrl(), { max: 2 });
});
afterAll(() => db.destroy());

describe('the test clock', () => {
  it('moves every clock that follows it, through the database', async () => {
    const a = systemClock(db, { testClock: true });
    const b = systemClock(db, { testClock: true });
    await a.advance(3600);
    await b.refresh();
    expect(b.offsetMs()).toBe(HOUR_MS);
    expect(b.now().getTime() - Date.now()).toBeGreaterThan(HOUR_MS - 60_000);
  });

  it('is ignored by a clock started without TEST_CLOCK', async () => {
    expect(await readClockOffset(db)).toBe(HOUR_MS);
    const real = systemClock(db, { testClock: false });
    await real.refresh();
    expect(real.offsetMs()).toBe(0);
    expect(Math.abs(real.now().getTime() - Date.now())).toBeLessThan(60_000);
    await expect(real.advance(60)).rejects.toThrow(/TEST_CLOCK/);
    expect(await readClockOffset(db)).toBe(HOUR_MS);
  });

  it('is cleared at the start of a service without TEST_CLOCK', async () => {
    expect(await discardTestClockOffset(db)).toBe(HOUR_MS);
    expect(await readClockOffset(db)).toBe(0);
    expect(await discardTestClockOffset(db)).toBe(0);
    const following = systemClock(db, { testClock: true });
    await following.refresh();
    expect(following.offsetMs()).toBe(0);
  });
});
