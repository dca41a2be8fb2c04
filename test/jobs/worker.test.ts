// The minute sweep: every instance's worker asks for it at the next minute boundary under one
// job key, so two instances on one database still queue one sweep (src/jobs/worker.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { testAppOn } from '../helpers/app.ts';
import { freshDatabaseUrl } from '../helpers/database.ts';
import { only } from '../helpers/checked.ts';
import { waitFor } from '../helpers/wait.ts';

const url = await freshDatabaseUrl();
const startedAt = Date.now();
const a = await testAppOn(url, { worker: true });
const b = await testAppOn(url, { worker: true });
afterAll(async () => {
  await a.close();
  await b.close();
});

describe('the minute sweep', () => {
  it('is one queued job at the next minute boundary, whichever instances ask', async () => {
    const queued = async () =>
      (
        await sql<{ run_at: Date }>`select j.run_at from graphile_worker._private_jobs j
      where j.key = 'sweep-every-minute'`.execute(a.db)
      ).rows;
    const rows = await waitFor('the minute sweep to be queued', queued, {
      until: (r) => r.length > 0,
      timeoutMs: 10_000,
      everyMs: 100,
    });
    expect(rows).toHaveLength(1);
    const at = only(rows).run_at.getTime();
    expect(at % 60_000).toBe(0);
    // A boundary after the instances asked (or the one after, if a sweep already ran).
    expect(at).toBeGreaterThan(startedAt);
    expect(at).toBeLessThanOrEqual(Date.now() + 60_000);
  });
});
